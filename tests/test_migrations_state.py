"""The migrations' state is the models': several migrations write their state by hand beside SQL of their own
(SeparateDatabaseAndState, e.g. the queue's indexes in factcheck 0031 and 0032), and a slip there would leave the
next `makemigrations` to write a migration nobody meant."""

import pytest
from django.core.management import call_command


@pytest.mark.django_db
def test_the_models_need_no_new_migration():
    call_command("makemigrations", "--check", "--dry-run", verbosity=0)  # exits 1 when one is needed
