"""Demo: memory banks of three ask-shell style tasks (a few dozen shell steps), run through the agent
loop's helper (`core.bank.agent.TaskMemory`): each step is handed the bank's memories relevant to it,
then added, so the compressions, summaries and events come out of the real flow (LLM summaries when one
is configured, rule-based otherwise)."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime, timedelta

from core.admin.deletion import Deletion
from core.bank import MemoryBank, MemoryEntry, list_banks
from core.bank.agent import TaskMemory
from core.demo import marks
from core.runtime import Workbench

# (skill, thinking, command, result, importance, tags)
Step = tuple[str, str, str, str, float, list[str]]

# bank name -> (days ago, hour, seconds between steps, steps)
TASKS: dict[str, tuple[int, int, int, list[Step]]] = {
    "deploy-flask-app": (4, 10, 75, [
        ("CommandSkill", "First check where we are and what the project contains.", "pwd && ls -la",
         "/home/dev/shop-api: app.py, requirements.txt, Dockerfile, tests/, .env.example", 0.6,
         ["filesystem"]),
        ("CommandSkill", "Check the Python version the server will run.", "python3 --version",
         "Python 3.11.8", 0.4, ["python"]),
        ("CommandSkill", "Create a virtual environment so dependencies stay isolated.",
         "python3 -m venv .venv && . .venv/bin/activate", "virtual environment created in .venv", 0.5,
         ["python"]),
        ("CommandSkill", "Install the pinned dependencies.", "pip install -r requirements.txt",
         "ERROR: Could not find a version that satisfies the requirement psycopg2==2.8.6", 0.9,
         ["python", "error"]),
        ("CommandSkill", "psycopg2 2.8.6 has no wheel for Python 3.11; switch to psycopg2-binary 2.9.9.",
         ("sed -i 's/psycopg2==2.8.6/psycopg2-binary==2.9.9/' requirements.txt && "
          "pip install -r requirements.txt"),
         "Successfully installed flask-3.0.2 gunicorn-21.2.0 psycopg2-binary-2.9.9 (12 packages)", 0.8,
         ["python", "fix"]),
        ("CommandSkill", "Run the tests before deploying.", "pytest -q", "38 passed, 2 skipped in 4.12s", 0.7,
         ["tests"]),
        ("CommandSkill", "The app needs DATABASE_URL; copy the example env file and fill it.",
         "cp .env.example .env && grep -c '=' .env", "6 variables; DATABASE_URL points at db.internal:5432",
         0.6, ["config"]),
        ("CommandSkill", "Build the container image.", "docker build -t shop-api:1.4.0 .",
         "Successfully tagged shop-api:1.4.0 (image 212 MB)", 0.7, ["docker"]),
        ("CommandSkill", "Start it locally on port 8080 to smoke-test.",
         "docker run -d --env-file .env -p 8080:8000 shop-api:1.4.0", "container 3f9c2a started", 0.5,
         ["docker"]),
        ("CommandSkill", "Check the health endpoint.", "curl -s localhost:8080/health",
         '{"status": "ok", "db": "connected"}', 0.8, ["http", "verification"]),
        ("CommandSkill", "Port 8080 is used by the old version on the server; find what holds it.",
         "ssh deploy@shop-prod 'sudo ss -ltnp | grep 8080'",
         "gunicorn pid 4121 (shop-api 1.3.2) on 0.0.0.0:8080",
         0.7, ["network"]),
        ("CommandSkill", "Push the image to the registry.", "docker push registry.internal/shop-api:1.4.0",
         "1.4.0: digest sha256:9be1… size 212 MB", 0.6, ["docker"]),
        ("CommandSkill", "Swap the running version with a zero-downtime restart.",
         "ssh deploy@shop-prod 'cd /srv/shop && docker compose pull && docker compose up -d'",
         "Recreating shop_api_1 … done", 0.8, ["deploy"]),
        ("CommandSkill", "Verify production health and version after the swap.",
         "curl -s https://shop.example.com/health", '{"status": "ok", "version": "1.4.0"}', 0.9,
         ["http", "verification", "deploy"]),
        ("CommandSkill", "Tail the logs for errors during the first minutes.",
         "ssh deploy@shop-prod 'docker logs --since 5m shop_api_1 | grep -ci error'", "0", 0.6, ["logs"]),
    ]),
    "disk-cleanup": (2, 15, 60, [
        ("CommandSkill", "The server reported a full disk; see which filesystem is full.", "df -h",
         "/dev/sda1 50G 48G 2.0G 96% /", 0.8, ["disk"]),
        ("CommandSkill", "Find the largest directories under /var.",
         "sudo du -xh /var --max-depth=2 | sort -h | tail -5",
         "21G /var/log/journal, 9.8G /var/lib/docker, 3.1G /var/cache/apt", 0.9, ["disk", "logs"]),
        ("CommandSkill", "The journal is far too big; check its configured limit.",
         "grep -i SystemMaxUse /etc/systemd/journald.conf", "#SystemMaxUse= (unset: no limit)", 0.7,
         ["logs", "config"]),
        ("CommandSkill", "Vacuum the journal down to 1 GB.", "sudo journalctl --vacuum-size=1G",
         "Vacuuming done, freed 19.6G of archived journals", 0.9, ["logs", "disk"]),
        ("CommandSkill", "Set a permanent journal limit so it does not happen again.",
         ("sudo sed -i 's/^#SystemMaxUse=.*/SystemMaxUse=1G/' /etc/systemd/journald.conf && "
          "sudo systemctl restart systemd-journald"), "journald restarted with SystemMaxUse=1G", 0.8,
         ["config", "fix"]),
        ("CommandSkill", "Remove dangling Docker images.", "docker image prune -f",
         "Total reclaimed space: 4.3GB", 0.6, ["docker", "disk"]),
        ("CommandSkill", "Clean the apt cache.", "sudo apt-get clean", "(no output)", 0.3, ["disk"]),
        ("CommandSkill", "Check the disk again.", "df -h /", "/dev/sda1 50G 21G 27G 44% /", 0.8,
         ["disk", "verification"]),
    ]),
    "nginx-502": (1, 9, 90, [
        ("CommandSkill", "Users see 502 errors; read the nginx error log first.",
         "sudo tail -n 20 /var/log/nginx/error.log",
         "connect() to unix:/run/gunicorn.sock failed (2: No such file or directory)", 0.9,
         ["nginx", "logs", "error"]),
        ("CommandSkill", "The socket is missing, so gunicorn is probably down.", "systemctl status gunicorn",
         "failed (Result: exit-code) since 08:41; ModuleNotFoundError: No module named 'dotenv'", 0.9,
         ["gunicorn", "error"]),
        ("CommandSkill", "A dependency is missing in the service's virtualenv.",
         "/srv/blog/.venv/bin/pip install python-dotenv==1.0.1", "Successfully installed python-dotenv-1.0.1",
         0.8, ["python", "fix"]),
        ("CommandSkill", "Restart gunicorn and check it stays up.",
         "sudo systemctl restart gunicorn && systemctl is-active gunicorn", "active", 0.8, ["gunicorn"]),
        ("CommandSkill", "Confirm the site answers again.", "curl -sI https://blog.example.com | head -1",
         "HTTP/2 200", 0.9, ["http", "verification"]),
        ("CommandSkill", "Add the missing package to requirements so the next deploy has it.",
         "echo 'python-dotenv==1.0.1' >> requirements.txt && git commit -am 'Pin python-dotenv'",
         "[main 7c1d2e0] Pin python-dotenv", 0.7, ["git", "fix"]),
        ("CommandSkill", "Look for other 502s in the access log since the fix.",
         "sudo awk '$9 == 502' /var/log/nginx/access.log | wc -l", "0", 0.5, ["nginx", "verification"]),
    ]),
}


MARK = "bank"


def load(wb: Workbench, say: Callable[[str], None] = print) -> None:
    reset(wb)  # loading twice gives the same banks, not doubled ones
    instance = wb.settings.instance
    now = datetime.now(UTC).replace(microsecond=0)
    for name, (days_ago, hour, gap_s, steps) in TASKS.items():
        if name in {b.name for b in list_banks(wb, instance)}:
            say(f"demo: a memory bank named {name!r} is not the demo's; left as it is, not loaded")
            continue
        marks.mark(wb, MARK, [name])
        memory = TaskMemory(MemoryBank(wb, instance, name))
        start = (now - timedelta(days=days_ago)).replace(hour=hour, minute=0, second=0)
        recalled = 0
        for i, (skill, thinking, command, result, importance, tags) in enumerate(steps):
            done = MemoryEntry(skill_name=skill, thinking=thinking, command=command, result=result,
                               importance=importance, tags=tags, step_number=i + 1,
                               timestamp=start + timedelta(seconds=i * gap_s))
            # The scripted steps ignore what they are handed; a real agent's skill selector reads it.
            outcome = memory.step(thinking, lambda _context, done=done: done)
            recalled += len(outcome.context.relevant)
        stats = memory.bank.stats()
        say(f"demo: bank {name}: {stats.total_entries} steps, {stats.summaries} "
            f"{'summary' if stats.summaries == 1 else 'summaries'}, {recalled} relevant memories handed "
            "to later steps")


def reset(wb: Workbench) -> None:
    marks.remove(wb, MARK, Deletion.bank)
