"""The vector column's field writes its values with apps.core.halfvec.halfvec_text: no change to the database."""
from django.conf import settings
from django.db import migrations

import apps.core.halfvec


class Migration(migrations.Migration):

    dependencies = [
        ('memories', '0012_model_switch'),
    ]

    operations = [
        migrations.AlterField(
            model_name='memoryvector',
            name='embedding',
            field=apps.core.halfvec.HalfVectorField(dimensions=settings.ENGRAM_EMBEDDING_DIMENSIONS),
        ),
    ]
