"""What keeps the embedded servers the owner's alone: private directories, generated secrets, short
socket paths, and the system account Postgres runs as when we are root.

Data directories are 0700 and their files 0600; nothing outside `DATA_DIR` ever changes mode. Postgres
refuses to run as root, so as root it runs as the `pgserver` account (the name the pgserver wheel
uses): then `DATA_DIR` is 0710 with that account's group, so the account can reach its data directory
and nobody else can even list `DATA_DIR`, and each parent of `DATA_DIR` must already let it pass
(we say which one does not, never chmod it).
"""

from __future__ import annotations

import grp
import hashlib
import os
import pwd
import secrets
import stat
import subprocess
from dataclasses import dataclass
from pathlib import Path

from core.errors import ConfigError, ServiceUnavailable

# The longest socket path either server uses below its socket base: `pg/.s.PGSQL.5432`,
# `redis/redis.sock`. A Unix socket path holds at most 107 bytes (108 with the final NUL).
SOCKET_NAME_MAX = 16
SOCKET_PATH_MAX = 107
SERVICE_ACCOUNT = "pgserver"


@dataclass(frozen=True)
class Account:
    """The system account a server runs as: us, or `pgserver` when we are root."""

    uid: int
    gid: int
    name: str

    @property
    def is_us(self) -> bool:
        return self.uid == os.geteuid()


def postgres_account() -> Account:
    """Who runs Postgres: this user, or (as root, since Postgres refuses root) the `pgserver` account,
    created the first time as the pgserver wheel did."""
    if os.geteuid() != 0:
        return Account(os.geteuid(), os.getegid(), pwd.getpwuid(os.geteuid()).pw_name)
    try:
        entry = pwd.getpwnam(SERVICE_ACCOUNT)
    except KeyError:
        try:
            subprocess.run(["useradd", "--system", "--no-create-home", "--shell", "/usr/sbin/nologin",
                            SERVICE_ACCOUNT], check=True, capture_output=True, timeout=30)
        except (subprocess.SubprocessError, OSError) as e:
            raise ServiceUnavailable("Postgres", f"running as root, the embedded Postgres needs the system "
                                     f"user {SERVICE_ACCOUNT!r} and it could not be created ({e}). Create it "
                                     f"(useradd --system {SERVICE_ACCOUNT}) or run as another user.") from e
        entry = pwd.getpwnam(SERVICE_ACCOUNT)
    return Account(entry.pw_uid, entry.pw_gid, entry.pw_name)


def private_dir(path: Path, *, owner: Account | None = None, reachable_by: Account | None = None) -> Path:
    """Create `path` (0700) or bring an existing one back to 0700, refusing a symlink or a directory
    someone else owns. `owner`: another account to own it (as root, Postgres's). `reachable_by`: an
    account that must pass through it: mode 0710 with that account's group instead."""
    try:
        path.mkdir(mode=0o700)
    except FileExistsError:
        pass
    except OSError as e:  # a folder that cannot hold it (/proc), not ours, read-only: a setting to change
        raise ConfigError(f"cannot create the folder {path}: {e.strerror}. Set DATA_DIR to a folder you can "
                          "write to.") from e
    info = os.lstat(path)
    owner_uid = owner.uid if owner else os.geteuid()
    if stat.S_ISLNK(info.st_mode) or not stat.S_ISDIR(info.st_mode):
        raise ServiceUnavailable("the embedded servers", f"{path} is not a directory (a symlink or a file is "
                                 "there). Remove it, or set DATA_DIR to another path.")
    if info.st_uid not in (owner_uid, os.geteuid()):
        raise ServiceUnavailable("the embedded servers", f"{path} belongs to another user (uid {info.st_uid}). "
                                 "Remove it, or set DATA_DIR to another path.")
    if owner and info.st_uid != owner.uid:
        os.chown(path, owner.uid, owner.gid)
    if reachable_by and not reachable_by.is_us:
        os.chown(path, -1, reachable_by.gid)
        os.chmod(path, 0o710)
    else:
        os.chmod(path, 0o700)
    return path


def make_private(tree: Path, *, skip: tuple[Path, ...] = ()) -> None:
    """Directories 0700 and files 0600 under `tree` (what an older version left 0755/0644), except the
    `skip` subtrees (Postgres keeps its own data directory private and refuses to start otherwise)."""
    for root, dirs, files in os.walk(tree):
        here = Path(root)
        dirs[:] = [d for d in dirs if here / d not in skip]
        for name in dirs:
            _chmod_if_ours(here / name, 0o700)
        for name in files:
            _chmod_if_ours(here / name, 0o600)


def _chmod_if_ours(path: Path, mode: int) -> None:
    try:
        info = os.lstat(path)
        if info.st_uid == os.geteuid() and not stat.S_ISLNK(info.st_mode) and stat.S_IMODE(info.st_mode) != mode:
            os.chmod(path, mode)
    except FileNotFoundError:
        pass  # a server removed it meanwhile (a temporary file)


def secret(path: Path, *, readable_by: Account | None = None) -> str:
    """The password kept in `path` (0600), generated the first time. URL-safe, so it goes into a
    connection URL as it is."""
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
    except FileExistsError:
        value = path.read_text().strip()
        if value:
            return value
        fd = os.open(path, os.O_WRONLY | os.O_TRUNC | os.O_NOFOLLOW)
    value = secrets.token_urlsafe(32)
    with os.fdopen(fd, "w") as f:
        f.write(value + "\n")
    os.chmod(path, 0o600)
    if readable_by and not readable_by.is_us:
        os.chown(path, readable_by.uid, readable_by.gid)
    return value


def socket_base(data_dir: Path) -> Path:
    """Where both servers' sockets live: `DATA_DIR` itself when the paths fit in a Unix socket address,
    else a private `/tmp/wb-<uid>-<hash of DATA_DIR>` (the same for every process using `DATA_DIR`)."""
    if len(os.fsencode(data_dir)) + 1 + SOCKET_NAME_MAX <= SOCKET_PATH_MAX:
        return data_dir
    digest = hashlib.sha256(os.fsencode(data_dir)).hexdigest()[:16]
    return Path("/tmp") / f"wb-{os.geteuid()}-{digest}"


def prepare_data_dir(data_dir: Path) -> Account:
    """Make `DATA_DIR` (and the socket base, when apart from it) private, fix the modes an older version
    left under it, and return the account Postgres runs as, which must reach its own directories."""
    account = postgres_account()
    private_dir(data_dir, reachable_by=account)
    make_private(data_dir, skip=(data_dir / "pg",))
    base = socket_base(data_dir)
    if base != data_dir:
        private_dir(base, reachable_by=account)
    return account


def check_reachable(path: Path, account: Account, service: str) -> None:
    """Refuse, naming the directory and the fix, when `account` cannot pass through every parent of
    `path` (as root, Postgres runs as another account). We never chmod a directory outside DATA_DIR."""
    if account.is_us:
        return
    groups = {account.gid} | {g.gr_gid for g in grp.getgrall() if account.name in g.gr_mem}
    for parent in reversed(path.parents):
        info = parent.stat()
        if info.st_uid == account.uid:
            allowed = info.st_mode & stat.S_IXUSR
        elif info.st_gid in groups:
            allowed = info.st_mode & stat.S_IXGRP
        else:
            allowed = info.st_mode & stat.S_IXOTH
        if not allowed:
            raise ServiceUnavailable(service, f"running as root, the embedded server runs as the system user "
                                     f"{account.name!r}, which cannot enter {parent}. Let it pass "
                                     f"(chmod o+x {parent}), or set DATA_DIR to a directory it can reach.")


def running_pid(pid_file: Path, name: str) -> int | None:
    """The pid in `pid_file` if that process is alive and is `name` (a pid can be reused)."""
    try:
        pid = int(pid_file.read_text().split()[0])
        os.kill(pid, 0)
    except (FileNotFoundError, IndexError, ValueError, ProcessLookupError):
        return None
    except PermissionError:
        pass  # alive, under another user
    try:
        comm = Path(f"/proc/{pid}/comm").read_text().strip()
        status = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return pid  # no /proc: trust the pid file
    if status == "Z" or not name.startswith(comm):
        return None
    return pid
