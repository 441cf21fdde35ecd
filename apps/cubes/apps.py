from django.apps import AppConfig


class CubesConfig(AppConfig):
    name = "apps.cubes"
    label = "cubes"
