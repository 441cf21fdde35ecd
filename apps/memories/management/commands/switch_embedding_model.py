"""`manage.py switch_embedding_model MODEL [--inline]`, `--status`: move every stored vector to another model.

By default the switch runs on a Celery worker and this command returns its run id; `--status` shows the runs, with
their progress, rate and time left. `--inline` runs it here with a progress bar. Engram keeps answering meanwhile
(apps/memories/services/model_switch.py); once it is done, restart Engram with ENGRAM_EMBEDDING_MODEL=MODEL.
"""
from __future__ import annotations

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError
from django.utils import timezone
from tqdm import tqdm

from apps.core.exceptions import DomainError
from apps.memories.models import ModelSwitch
from apps.memories.services.model_switch import stored_model, switch_run, switch_start
from apps.memories.vector_tables import stored_dimensions


class Command(BaseCommand):
    help = "Re-embed every stored vector with another embedding model (on Celery, or --inline), or show --status."

    def add_arguments(self, parser):
        parser.add_argument("model", nargs="?", help="the new model: " + ", ".join(settings.ENGRAM_EMBEDDING_MODELS)
                            + ", or a sentence-transformers model folder")
        parser.add_argument("--inline", action="store_true", help="run here with a progress bar, not on Celery")
        parser.add_argument("--status", action="store_true", help="show the switches and what is stored now")

    def handle(self, *args, model=None, inline=False, status=False, **options):
        if status:
            return self._status()
        if not model:
            raise CommandError("Name the model to switch to (or give --status).")
        try:
            run = switch_start(model)
        except DomainError as exc:
            raise CommandError(exc.message) from exc
        if not inline:
            from apps.memories.tasks import switch_embedding_model

            switch_embedding_model.delay(str(run.id))
            self.stdout.write(f"Switch {run.id} to {model} queued on Celery: follow it with "
                              "`manage.py switch_embedding_model --status`.")
            return
        bar = tqdm(unit="vector", desc=f"switch to {model}", file=self.stderr._out, dynamic_ncols=True)

        def progress(current: ModelSwitch) -> None:
            bar.total = current.total
            bar.n = min(current.done, current.total)
            bar.set_postfix_str(current.status, refresh=True)

        try:
            switch_run(run, progress=progress)
        except Exception as exc:
            raise CommandError(f"The switch to {model} failed: {exc}. Run the command again to go on from where "
                               "it stopped.") from exc
        finally:
            bar.close()
        self.stdout.write(self.style.SUCCESS(
            f"Every vector is now {model}'s ({run.dimensions} dimensions). Restart Engram with "
            f"ENGRAM_EMBEDDING_MODEL={model}."))

    def _status(self) -> None:
        model, dimensions = stored_model(), stored_dimensions()
        self.stdout.write(f"Stored vectors: {model or 'an unknown model'} ({dimensions} dimensions); this process "
                          f"is configured for {settings.ENGRAM_EMBEDDING_MODEL} "
                          f"({settings.ENGRAM_EMBEDDING_DIMENSIONS}).")
        for run in ModelSwitch.objects.all()[:10]:
            self.stdout.write(f"{run.id}  {run.model}  {run.get_status_display()}  {_progress(run)}"
                              + (f"  error: {run.error}" if run.error else ""))


def _progress(run: ModelSwitch) -> str:
    shown = f"{min(run.done, run.total)}/{run.total}"
    if run.status != ModelSwitch.Status.STAGING or not run.started_at or not run.done:
        return shown
    elapsed = (timezone.now() - run.started_at).total_seconds()
    rate = run.done / elapsed if elapsed > 0 else 0.0
    left = (run.total - run.done) / rate if rate else 0.0
    return f"{shown}, {rate:.1f}/s, about {left / 60:.0f} min left"
