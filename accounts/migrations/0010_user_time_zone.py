from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ("accounts", "0009_trust_safety_unlocks_sign_ins"),
    ]

    operations = [
        migrations.AddField(
            model_name="user",
            name="time_zone",
            field=models.CharField(default="UTC", help_text="Times are shown in this time zone.", max_length=64),
        ),
    ]
