"""Which archives were restored into which instance: what lets the same archive be restored again into
an instance that is no longer empty (resuming an interrupted restore, or a repeat that finds everything
in place), while any other archive is refused there."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from core.runtime import Workbench

DDL = """
CREATE TABLE IF NOT EXISTS archive_restore (
    instance        text        NOT NULL,
    archive_id      text        NOT NULL,
    source_instance text        NOT NULL,
    started_at      timestamptz NOT NULL DEFAULT now(),
    finished_at     timestamptz,
    PRIMARY KEY (instance, archive_id)
);
"""


def restored_before(wb: Workbench, instance: str, archive_id: str) -> bool:
    with wb.pool().connection() as conn:
        return conn.execute("SELECT 1 FROM archive_restore WHERE instance = %s AND archive_id = %s",
                            (instance, archive_id)).fetchone() is not None


def begin(wb: Workbench, instance: str, archive_id: str, source: str) -> None:
    """Recorded before the first write, so a restore stopped half-way may run again."""
    with wb.pool().connection() as conn:
        conn.execute("INSERT INTO archive_restore (instance, archive_id, source_instance) VALUES (%s, %s, %s) "
                     "ON CONFLICT DO NOTHING", (instance, archive_id, source))


def finish(wb: Workbench, instance: str, archive_id: str) -> None:
    with wb.pool().connection() as conn:
        conn.execute("UPDATE archive_restore SET finished_at = now() WHERE instance = %s AND archive_id = %s",
                     (instance, archive_id))


def restored_from(wb: Workbench, instance: str) -> tuple[str, ...]:
    """The instances whose archives were restored into `instance` under its other name: their thoughts have
    the ids the restore gave them (`core.archive.ids.moved_id`), which an import of the same file looks for
    (`core.importing.restored`)."""
    with wb.pool().connection() as conn:
        return tuple(row[0] for row in conn.execute(
            "SELECT DISTINCT source_instance FROM archive_restore WHERE instance = %s AND source_instance <> instance "
            "ORDER BY 1", (instance,)))
