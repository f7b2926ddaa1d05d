"""Shared by the data migrations that grant the trust_safety group its rights.

The leading underscore keeps Django's migration loader from taking this module for a migration.
"""

from __future__ import annotations


def grant_model_permissions(apps, codenames: list[tuple[str, str]]) -> None:
    """Add (app_label, codename) model permissions to the trust_safety group.

    Django creates model permissions after migrations run, so they are created here first.
    """
    from django.contrib.auth.management import create_permissions

    for app_config in apps.get_app_configs():
        app_config.models_module = True
        create_permissions(app_config, apps=apps, verbosity=0)
        app_config.models_module = None
    Group = apps.get_model("auth", "Group")
    Permission = apps.get_model("auth", "Permission")
    group, _ = Group.objects.get_or_create(name="trust_safety")
    for app_label, codename in codenames:
        group.permissions.add(Permission.objects.get(content_type__app_label=app_label, codename=codename))
