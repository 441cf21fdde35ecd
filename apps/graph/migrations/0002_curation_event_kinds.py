from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('graph', '0001_initial'),
    ]

    operations = [
        migrations.AlterField(
            model_name='graphevent',
            name='kind',
            field=models.CharField(choices=[('memories.created', 'Memories created'), ('memory.updated', 'Memory updated'), ('memory.relinked', 'Memory relinked'), ('memory.soft_deleted', 'Memory soft-deleted'), ('memory.restored', 'Memory restored'), ('memory.hard_deleted', 'Memory hard-deleted'), ('memory.boosted', 'Memory boosted'), ('memories.merged', 'Memories merged'), ('memory.forgotten', 'Memory forgotten'), ('undo.applied', 'Undo applied')], max_length=40),
        ),
    ]
