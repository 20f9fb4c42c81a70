"""The Python a reader can paste into a project of their own to run what a lab run ran: the
lane's Celery app with its broker settings, the task (with the guard when the run had one),
and the call that sends the run's tasks. Shown on the run page beside the explanation."""

from __future__ import annotations

from typing import Any


def _py(value: Any) -> str:
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return repr(value)


def celery_code(*, params: dict[str, Any], lane) -> str:
    """Python a reader can paste into a project of their own: the app's broker settings as
    the lane sets them (teachlab/lab/worker/celery_app.py) and the call that sends the run's tasks."""
    duration = float(params.get("duration") or 0)
    lines = (["import time", ""] if duration else []) + _app_lines(lane)
    if params.get("guard"):
        lines[lines.index("from celery import Celery")] = "import redis\nfrom celery import Celery"
        lines.append('redis_client = redis.Redis(host="localhost", db=3)')
    lines += _task_lines(params, duration=duration)
    lines += ["", ""]
    if params.get("eta") not in (None, ""):
        lines.insert(0, "from datetime import datetime, timedelta, timezone")
    lines += _send_lines(params)
    return "\n".join(lines) + "\n"


def _app_lines(lane) -> list[str]:
    """The Celery app with the lane's broker settings."""
    if lane.kind == "rabbit":
        lines = [
            "from celery import Celery",
            "from kombu import Exchange, Queue",
            "",
            'app = Celery("shop", broker="amqp://guest:guest@localhost:5672//")',
            f'exchange = Exchange("{lane.queue}", type="{lane.exchange_type}")',
            "app.conf.task_queues = [",
            f'    Queue("{lane.queue}", exchange, routing_key="{lane.queue}",',
            '          queue_arguments={"x-queue-type": "quorum"}),',
            "]",
            f'app.conf.task_default_queue = "{lane.queue}"',
            f'app.conf.task_default_exchange = "{lane.queue}"',
            f'app.conf.task_default_exchange_type = "{lane.exchange_type}"',
            f'app.conf.task_default_routing_key = "{lane.queue}"',
            "# RabbitMQ holds countdowns itself (native delayed delivery) on a topic exchange:",
            'app.conf.broker_native_delayed_delivery_queue_type = "quorum"',
        ]
    else:
        options = lane.transport_options()
        lines = [
            "from celery import Celery",
            "",
            'app = Celery("shop", broker="redis://localhost:6379/0")',
            "app.conf.broker_transport_options = {",
            f'    "visibility_timeout": {_py(options["visibility_timeout"])},'
            "  # seconds a delivery may stay unacked",
            f'    "unacked_restore_interval": {_py(options["unacked_restore_interval"])},'
            "  # kombu's default: 10",
            f'    "unacked_restore_throttle": {_py(options["unacked_restore_throttle"])},'
            "  # kombu's default: 10",
            "}",
            f'app.conf.task_default_queue = "{lane.queue}"',
        ]
    if lane.prefetch_multiplier is not None:
        lines.append(f"app.conf.worker_prefetch_multiplier = {lane.prefetch_multiplier}")
    return lines


def _task_lines(params: dict[str, Any], *, duration: float) -> list[str]:
    """The task, with the guard when the run had one."""
    acks_late = bool(params.get("acks_late"))
    lines = [
        "",
        "",
        f"@app.task(acks_late={acks_late})" + ("  # ack after the body" if acks_late else ""),
        "def work(index):",
    ]
    if params.get("guard"):
        ttl = int(params.get("guard_ttl") or 600)
        lines += [
            "    # the guard: claim the work, not the task id, before doing it",
            f'    if not redis_client.set(f"work:{{index}}", "1", nx=True, ex={ttl}):',
            "        return",
        ]
    lines.append(
        f"    time.sleep({_py(duration)})  # the body" if duration else "    pass  # the body"
    )
    return lines


def _send_lines(params: dict[str, Any]) -> list[str]:
    """The calls that send the run's tasks, with their countdown, ETA and expiry."""
    count = int(params.get("count") or 1)
    countdown = float(params.get("countdown") or 0)
    spacing = float(params.get("spacing") or 0)
    lines: list[str] = []
    call_options: list[str] = []
    if params.get("eta") not in (None, ""):
        if count > 1 and spacing:
            call_options.append(f"eta=due_at + timedelta(seconds={_py(spacing)} * i)")
        else:
            call_options.append("eta=due_at")
        lines.append(
            f"due_at = datetime.fromtimestamp({_py(float(params['eta']))}, tz=timezone.utc)"
        )
    expires = params.get("expires")
    if expires not in (None, ""):
        call_options.append(f"expires={_py(float(expires))}")
    if count == 1:
        if params.get("eta") in (None, "") and countdown:
            call_options.insert(0, f"countdown={_py(countdown)}")
        lines.append(f"work.apply_async(args=[0]{''.join(', ' + o for o in call_options)})")
    else:
        if params.get("eta") in (None, ""):
            due = _py(countdown) if countdown else ""
            step = f"{_py(spacing)} * i" if spacing else ""
            expr = " + ".join(p for p in (due, step) if p) or "0"
            call_options.insert(0, f"countdown={expr}")
        lines.append(f"for i in range({count}):")
        lines.append(f"    work.apply_async(args=[i]{''.join(', ' + o for o in call_options)})")
    return lines
