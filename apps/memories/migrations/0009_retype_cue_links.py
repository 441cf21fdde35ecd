"""Links that the store path typed causal from a cue word alone (before causal_claims), pointing from the newer memory
to its neighbour whatever the clause said, become semantic: their direction was no claim's. Links made by hand keep
their type. Migrating prints how many changed; new stores type a link causal only from a parsed claim."""
from django.db import migrations


def retype(apps, schema_editor):
    MemoryLink = apps.get_model("memories", "MemoryLink")
    cue_made = MemoryLink.objects.filter(link_type="causal", origin="store")
    changed = cue_made.update(link_type="semantic")
    if changed:
        print(f"\n  memories 0009: {changed} causal link(s) typed by a cue word alone are now semantic "
              "(their direction came from which memory was stored last, not from a clause).")


class Migration(migrations.Migration):
    dependencies = [("memories", "0008_link_origin")]
    operations = [migrations.RunPython(retype, migrations.RunPython.noop)]
