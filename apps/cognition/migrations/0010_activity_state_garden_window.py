from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('cognition', '0009_undo_part'),
    ]

    operations = [
        migrations.AddField(
            model_name='activitystate',
            name='garden_cursor',
            field=models.UUIDField(blank=True, null=True),
        ),
        migrations.AddField(
            model_name='activitystate',
            name='garden_round',
            field=models.JSONField(blank=True, default=dict),
        ),
    ]
