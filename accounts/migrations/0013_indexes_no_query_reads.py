"""Drops the LIKE twins of a user's role and a token's key hash (core.indexes): both are looked up whole."""

from django.db import migrations

from core.indexes import drop_pattern_indexes


class Migration(migrations.Migration):

    dependencies = [
        ('accounts', '0012_user_show_media'),
    ]

    operations = [
        drop_pattern_indexes('accounts_user_role_57e97df0_like', 'accounts_apitoken_key_hash_f9a7d03c_like'),
    ]
