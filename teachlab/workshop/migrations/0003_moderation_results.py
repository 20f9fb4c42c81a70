# Moderation (locked joins, kicked seats, look-alike names), the leaderboard switch and the
# time a shared run's outcome was stored (issue 12). Written by hand, checked with
# `manage.py makemigrations --check`. Follows 0002_projector_rounds (merged after it).

from django.db import migrations, models


def fill_skeletons(apps, schema_editor):
    """Seats from before this migration get their skeletons, so new names are checked
    against them too."""
    from teachlab.workshop.names import skeletons

    Seat = apps.get_model("workshop", "Seat")
    for seat in Seat.objects.all().only("pk", "nickname"):
        typed, folded = skeletons(seat.nickname)
        Seat.objects.filter(pk=seat.pk).update(skeleton=typed, skeleton_folded=folded)


class Migration(migrations.Migration):
    dependencies = [
        ("workshop", "0002_projector_rounds"),
    ]

    operations = [
        migrations.AddField(
            model_name="room",
            name="joins_locked",
            field=models.BooleanField(default=False),
        ),
        migrations.AddField(
            model_name="room",
            name="leaderboard",
            field=models.BooleanField(default=False),
        ),
        migrations.AlterField(
            model_name="seat",
            name="nickname_key",
            field=models.CharField(max_length=255),
        ),
        migrations.AddField(
            model_name="seat",
            name="skeleton",
            field=models.CharField(blank=True, db_index=True, max_length=255),
        ),
        migrations.AddField(
            model_name="seat",
            name="skeleton_folded",
            field=models.CharField(blank=True, db_index=True, max_length=255),
        ),
        migrations.AddField(
            model_name="seat",
            name="kicked_at",
            field=models.DateTimeField(blank=True, null=True),
        ),
        migrations.AddField(
            model_name="sharedrun",
            name="settled_at",
            field=models.DateTimeField(blank=True, null=True),
        ),
        migrations.RunPython(fill_skeletons, migrations.RunPython.noop),
    ]
