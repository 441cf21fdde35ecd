"""numpy's BLAS runs on ENGRAM_BLAS_THREADS threads (one) in every Engram process: its second thread spinning
against the embedding thread and PostgreSQL on two cores doubled inject_context's latency."""
import os
import subprocess
import sys

from django.conf import settings
from threadpoolctl import threadpool_info


def test_this_process_blas_runs_on_the_configured_threads():
    blas = [pool for pool in threadpool_info() if pool["user_api"] == "blas"]
    assert blas and {pool["num_threads"] for pool in blas} == {settings.ENGRAM_BLAS_THREADS} == {1}


def test_a_fresh_django_process_sets_it_at_start_up():
    code = ("import django; django.setup(); from threadpoolctl import threadpool_info; "
            "print(sorted({p['num_threads'] for p in threadpool_info() if p['user_api'] == 'blas'}))")
    found = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120,
                           env={**os.environ, "DJANGO_SETTINGS_MODULE": "config.settings.test",
                                "OPENBLAS_NUM_THREADS": "2"}, check=True)
    assert found.stdout.strip() == "[1]", found.stderr
