from django.db import migrations, models
from django.db.models import Func


class Migration(migrations.Migration):
    """Events keep the transaction that wrote them. The column is added empty first: a default given with it would
    stamp every existing Event with this migration's own transaction, as if they were all one operation."""

    dependencies = [
        ('cognition', '0002_undo_operation_relate'),
    ]

    operations = [
        migrations.AddField(
            model_name='event',
            name='transaction_id',
            field=models.BigIntegerField(blank=True, editable=False, null=True),
        ),
        migrations.AlterField(
            model_name='event',
            name='transaction_id',
            field=models.BigIntegerField(blank=True, db_default=Func(function='txid_current', output_field=models.BigIntegerField()), editable=False, null=True),
        ),
    ]
