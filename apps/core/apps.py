from django.apps import AppConfig
from django.conf import settings


class CoreConfig(AppConfig):
    name = "apps.core"
    label = "core"

    def ready(self) -> None:
        import numpy  # noqa: F401  (loads OpenBLAS, so that threadpoolctl finds it)
        from threadpoolctl import threadpool_limits

        threadpool_limits(limits=settings.ENGRAM_BLAS_THREADS, user_api="blas")  # for the whole process
        from apps.core import checks  # noqa: F401  (registers the system checks)
        from apps.core.api import schema  # noqa: F401  (registers the REST schema extensions)
        from apps.core.runtime import freeze_long_lived

        freeze_long_lived()  # what start-up made lives as long as the process
