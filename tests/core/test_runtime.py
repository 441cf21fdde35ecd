"""What a process loads for its whole life is frozen out of the garbage collector's full collections: one such
collection walking the start-up and model objects took ~97 ms of a request."""
import os
import subprocess
import sys


def test_start_up_and_the_model_leave_little_for_a_full_collection_to_walk():
    code = ("import gc, django; django.setup(); from apps.memories.embeddings import get_text_encoder; "
            "after_setup = gc.get_freeze_count(); get_text_encoder()(['a first text']); "
            "print(after_setup, gc.get_freeze_count(), len(gc.get_objects()))")
    found = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300, check=True,
                           env={**os.environ, "DJANGO_SETTINGS_MODULE": "config.settings.test"})
    after_setup, frozen, walked = map(int, found.stdout.split())
    assert after_setup > 50_000 and frozen > after_setup  # start-up, then the model's load, were frozen
    assert walked < frozen / 10, found.stdout
