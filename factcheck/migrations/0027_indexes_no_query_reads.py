"""Drops the indexes no query reads (core.indexes): foreign keys' own indexes where another index starts with
the same column, and the LIKE twins of the post's text and URL keys, country, an organisation's name and a
semantic model's name. Each DROP INDEX takes a moment's exclusive lock on its table; nothing is rebuilt.
"""

import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models

from core.indexes import drop_pattern_indexes, unindex_foreign_key


class Migration(migrations.Migration):

    dependencies = [
        ('factcheck', '0026_postband_claims_only'),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        unindex_foreign_key(
            model_name='claim', name='reviewer', table='factcheck_claim', index='factcheck_claim_reviewer_id_d218bdf1', column='reviewer_id',
            field=models.ForeignKey(db_index=False, on_delete=django.db.models.deletion.PROTECT, related_name='claims', to=settings.AUTH_USER_MODEL),
        ),
        unindex_foreign_key(
            model_name='flag', name='post', table='factcheck_flag', index='factcheck_flag_post_id_e907dfd0', column='post_id',
            field=models.ForeignKey(db_index=False, on_delete=django.db.models.deletion.CASCADE, related_name='flags', to='factcheck.post'),
        ),
        unindex_foreign_key(
            model_name='flag', name='submitted_by', table='factcheck_flag', index='factcheck_flag_submitted_by_id_3b7047d7', column='submitted_by_id',
            field=models.ForeignKey(blank=True, db_index=False, null=True, on_delete=django.db.models.deletion.SET_NULL, related_name='+', to=settings.AUTH_USER_MODEL),
        ),
        unindex_foreign_key(
            model_name='match', name='post', table='factcheck_match', index='factcheck_match_post_id_5ee22763', column='post_id',
            field=models.ForeignKey(db_index=False, on_delete=django.db.models.deletion.PROTECT, related_name='matches', to='factcheck.post'),
        ),
        unindex_foreign_key(
            model_name='match', name='source', table='factcheck_match', index='factcheck_match_source_id_af5f1746', column='source_id',
            field=models.ForeignKey(db_index=False, on_delete=django.db.models.deletion.PROTECT, related_name='copies', to='factcheck.post'),
        ),
        unindex_foreign_key(
            model_name='post', name='page', table='factcheck_post', index='factcheck_post_page_id_3c5057b8', column='page_id',
            field=models.ForeignKey(db_index=False, on_delete=django.db.models.deletion.PROTECT, related_name='posts', to='factcheck.page'),
        ),
        unindex_foreign_key(
            model_name='postmedia', name='post', table='factcheck_postmedia', index='factcheck_postmedia_post_id_01ac75f9', column='post_id',
            field=models.ForeignKey(db_index=False, on_delete=django.db.models.deletion.CASCADE, related_name='media', to='factcheck.post'),
        ),
        unindex_foreign_key(
            model_name='rating', name='post', table='factcheck_rating', index='factcheck_rating_post_id_0855bf89', column='post_id',
            field=models.ForeignKey(db_index=False, on_delete=django.db.models.deletion.PROTECT, related_name='ratings', to='factcheck.post'),
        ),
        unindex_foreign_key(
            model_name='ratingdraft', name='reviewer', table='factcheck_ratingdraft', index='factcheck_ratingdraft_reviewer_id_7472e25e', column='reviewer_id',
            field=models.ForeignKey(db_index=False, on_delete=django.db.models.deletion.CASCADE, related_name='rating_drafts', to=settings.AUTH_USER_MODEL),
        ),
        drop_pattern_indexes(
            'factcheck_post_text_key_f463bb44_like',
            'factcheck_post_url_key_7969d3f3_like',
            'factcheck_post_country_566c3e58_like',
            'factcheck_organisation_name_a022b051_like',
            'factcheck_semanticbackfill_model_2cb9b376_like',
        ),
    ]
