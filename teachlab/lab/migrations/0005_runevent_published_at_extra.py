"""RunEvent.published_at gets a column of its own (it was kept in `data`), and `extra` holds
the event fields that have none (teachlab/lab/eventlog/labevent.py)."""

from django.db import migrations, models

BATCH = 2000


def published_out_of_data(apps, schema_editor):
    RunEvent = apps.get_model("lab", "RunEvent")
    rows = RunEvent.objects.filter(data__has_key="published_at").only("id", "data")
    batch = []
    for row in rows.iterator(chunk_size=BATCH):
        row.published_at = row.data.pop("published_at")
        batch.append(row)
        if len(batch) >= BATCH:
            RunEvent.objects.bulk_update(batch, ["published_at", "data"])
            batch = []
    RunEvent.objects.bulk_update(batch, ["published_at", "data"])


def published_back_into_data(apps, schema_editor):
    RunEvent = apps.get_model("lab", "RunEvent")
    rows = RunEvent.objects.filter(published_at__isnull=False).only("id", "data", "published_at")
    batch = []
    for row in rows.iterator(chunk_size=BATCH):
        row.data = {**(row.data or {}), "published_at": row.published_at}
        batch.append(row)
        if len(batch) >= BATCH:
            RunEvent.objects.bulk_update(batch, ["data"])
            batch = []
    RunEvent.objects.bulk_update(batch, ["data"])


class Migration(migrations.Migration):
    dependencies = [
        ("lab", "0004_run_network"),
    ]

    operations = [
        migrations.AddField(
            model_name="runevent",
            name="published_at",
            field=models.FloatField(blank=True, null=True),
        ),
        migrations.AddField(
            model_name="runevent",
            name="extra",
            field=models.JSONField(blank=True, default=dict),
        ),
        migrations.RunPython(published_out_of_data, published_back_into_data),
    ]
