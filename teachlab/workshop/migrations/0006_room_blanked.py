from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("workshop", "0005_session_plans"),
    ]

    operations = [
        migrations.AddField(
            model_name="room",
            name="blanked",
            field=models.BooleanField(default=False),
        ),
        migrations.AddField(
            model_name="room",
            name="staged_at",
            field=models.DateTimeField(blank=True, null=True),
        ),
    ]
