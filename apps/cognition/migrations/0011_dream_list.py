"""DreamList: a dream step's long lists leave the run's checkpoint; runs not finished carry theirs over."""
import django.db.models.deletion
from django.db import migrations, models

UNFINISHED = ("queued", "running", "interrupted")


def _lists_of(phase: str | None, state: dict) -> tuple[dict, dict]:
    """The checkpoint state as it now is, and the lists taken out of it, for a run stopped in ``phase``."""
    if phase == "nrem_link" and isinstance(state.get("pairs"), list):
        return {"pairs": len(state["pairs"])}, {"pairs": state["pairs"]}
    if phase == "nrem_summarise" and isinstance(state.get("pairs"), list):
        pairs = state["pairs"]
        return {"stage": "knn", "found": len(pairs)}, ({"pairs": [pairs]} if pairs else {})
    if phase == "nrem_summarise" and isinstance(state.get("clusters"), list):
        return {"stage": "summarise", "clusters": len(state["clusters"])}, {"clusters": state["clusters"]}
    return state, {}


def forwards(apps, schema_editor):
    ConsolidationRun, DreamList = apps.get_model("cognition", "ConsolidationRun"), apps.get_model("cognition", "DreamList")
    for run in ConsolidationRun.objects.filter(status__in=UNFINISHED):
        checkpoint = run.checkpoint or {}
        state, lists = _lists_of(checkpoint.get("phase"), checkpoint.get("state") or {})
        if not lists:
            continue
        DreamList.objects.bulk_create([DreamList(run=run, key=key, seq=seq, item=item)
                                       for key, items in lists.items() for seq, item in enumerate(items)])
        run.checkpoint = {**checkpoint, "state": state, "lists": {key: len(items) for key, items in lists.items()}}
        run.save(update_fields=["checkpoint"])


def backwards(apps, schema_editor):
    ConsolidationRun, DreamList = apps.get_model("cognition", "ConsolidationRun"), apps.get_model("cognition", "DreamList")
    for run in ConsolidationRun.objects.filter(status__in=UNFINISHED, lists__isnull=False).distinct():
        checkpoint, state = run.checkpoint, dict(run.checkpoint.get("state") or {})
        items = {key: [row.item for row in DreamList.objects.filter(run=run, key=key).order_by("seq")]
                 for key in (checkpoint.get("lists") or {})}
        if "clusters" in items:
            state["clusters"] = items["clusters"]
        elif "pairs" in items and state.get("stage") == "knn":
            state = {"stage": "knn", "pairs": sorted({tuple(edge) for chunk in items["pairs"] for edge in chunk})}
        elif "pairs" in items:
            state["pairs"] = items["pairs"]
        run.checkpoint = {**{k: v for k, v in checkpoint.items() if k != "lists"}, "state": state}
        run.save(update_fields=["checkpoint"])


class Migration(migrations.Migration):

    dependencies = [
        ('cognition', '0010_activity_state_garden_window'),
    ]

    operations = [
        migrations.CreateModel(
            name='DreamList',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('key', models.CharField(max_length=16)),
                ('seq', models.PositiveIntegerField()),
                ('item', models.JSONField()),
                ('run', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='lists', to='cognition.consolidationrun')),
            ],
            options={
                'constraints': [models.UniqueConstraint(fields=('run', 'key', 'seq'), name='dream_list_seq_unique')],
            },
        ),
        migrations.RunPython(forwards, backwards),
    ]
