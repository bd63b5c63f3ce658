"""The real components weir's tests run against, each started on free loopback ports.

Every component writes its log to a file in its own working directory, is considered started
only once a readiness probe answers, and is stopped (its whole process group) by stop(), which
is safe to call twice. Connection settings are exported as WEIR_TEST_* environment variables
(see settings()), which C++ tests and pytest fixtures both read.
"""

from __future__ import annotations

import base64
import os
import pwd
import shutil
import signal
import socket
import subprocess
import time
import urllib.request
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DEPS = Path(os.environ.get("WEIR_DEPS_DIR", ROOT / ".deps"))

# Azurite's documented development account (public, identical in every Azurite install).
AZURITE_ACCOUNT = "devstoreaccount1"
AZURITE_KEY = (
    "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw=="
)


class ComponentError(RuntimeError):
    """A component failed to start; the message ends with the tail of its log."""


_handed_out: set[int] = set()


def free_port() -> int:
    """A port nothing listens on now, never one this process handed out before: the kernel may
    give the same ephemeral port to two binds in a row, and a test that asks for two ports (a
    server's PostgreSQL and HTTP ports) before starting the server would get a collision."""
    while True:
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        if port not in _handed_out:
            _handed_out.add(port)
            return port


def port_open(port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.settimeout(0.5)
        return s.connect_ex(("127.0.0.1", port)) == 0


class Component:
    """One external process. Subclasses define command(), ready() and settings()."""

    name = "component"
    start_timeout_s = 60.0
    # Components this one needs running first: name -> the setting that shows it is up.
    requires: dict[str, str] = {}

    def __init__(self, workdir: Path):
        self.workdir = workdir / self.name
        self.workdir.mkdir(parents=True, exist_ok=True)
        self.log_path = self.workdir / f"{self.name}.log"
        self.process: subprocess.Popen | None = None
        self.port = free_port()  # the port clients connect to

    # --- to define ---------------------------------------------------------------------------
    def configure(self, settings: dict[str, str]) -> None:
        """Receives the settings of the components it `requires`, before prepare()."""

    def prepare(self) -> None:
        """One-time work before the process starts (formatting storage, initdb)."""

    def command(self) -> list[str]:
        raise NotImplementedError

    def ready(self) -> bool:
        raise NotImplementedError

    def after_ready(self) -> None:
        """Work once the component answers (creating a database)."""

    def settings(self) -> dict[str, str]:
        raise NotImplementedError

    # --- lifecycle ---------------------------------------------------------------------------
    def start(self) -> None:
        self._launch(fresh=True)

    def restart(self) -> None:
        """Starts a stopped component again on the same port, keeping its data (outage tests)."""
        self._launch(fresh=False)

    def _launch(self, fresh: bool) -> None:
        if fresh:
            self.prepare()
        log = open(self.log_path, "ab")
        self.process = subprocess.Popen(
            self.command(),
            cwd=self.workdir,
            stdout=log,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            start_new_session=True,  # its own process group: stop() ends every child too
            env=self.environment(),
        )
        log.close()
        deadline = time.monotonic() + self.start_timeout_s
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise ComponentError(
                    f"{self.name} exited with {self.process.returncode} while starting\n"
                    + self.log_tail()
                )
            try:
                if self.ready():
                    if fresh:
                        self.after_ready()
                    return
            except Exception:  # not answering yet: keep probing until the deadline
                pass
            time.sleep(0.2)
        self.stop()
        raise ComponentError(
            f"{self.name} was not ready within {self.start_timeout_s:.0f}s\n" + self.log_tail()
        )

    def environment(self) -> dict[str, str]:
        return dict(os.environ)

    def freeze(self) -> None:
        """SIGSTOP to the component's process group: it accepts connections (the kernel does)
        and answers nothing until thaw() (a frozen server, as a stalled disk or VM leaves it)."""
        os.killpg(self.process.pid, signal.SIGSTOP)

    def thaw(self) -> None:
        os.killpg(self.process.pid, signal.SIGCONT)

    def stop(self, grace_s: float = 10.0) -> None:
        if self.process is None or self.process.poll() is not None:
            return
        try:
            os.killpg(self.process.pid, signal.SIGCONT)  # a frozen one hears the SIGTERM
            os.killpg(self.process.pid, signal.SIGTERM)
            self.process.wait(timeout=grace_s)
        except subprocess.TimeoutExpired:
            os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait(timeout=grace_s)
        except ProcessLookupError:
            pass

    def log_tail(self, lines: int = 30) -> str:
        try:
            text = self.log_path.read_text(errors="replace").splitlines()
        except FileNotFoundError:
            return "(no log)"
        return f"--- last lines of {self.log_path} ---\n" + "\n".join(text[-lines:])


class Kafka(Component):
    """A single-node Apache Kafka broker in KRaft mode (broker and controller in one JVM)."""

    name = "kafka"
    start_timeout_s = 90.0

    def __init__(self, workdir: Path, heap: str = "768m"):
        super().__init__(workdir)
        self.controller_port = free_port()
        self.heap = heap
        self.libs = DEPS / "kafka" / "libs"
        # base64url: one start in 64 begins with '-', which is why it is passed as --cluster-id=.
        self.cluster_id = base64.urlsafe_b64encode(uuid.uuid4().bytes).decode().rstrip("=")

    def _java(self) -> list[str]:
        if not self.libs.is_dir():
            raise ComponentError(f"no Kafka jars in {self.libs}: run scripts/setup")
        return [
            "java",
            f"-Xmx{self.heap}",
            f"-Xms{self.heap}",
            "-XX:+UseG1GC",
            "-Djava.awt.headless=true",
            f"-Dlog4j2.configurationFile={self.workdir / 'log4j2.properties'}",
            "-cp",
            f"{self.libs}/*",
        ]

    def prepare(self) -> None:
        data = self.workdir / "data"
        shutil.rmtree(data, ignore_errors=True)
        props = {
            "process.roles": "broker,controller",
            "node.id": "1",
            "controller.quorum.voters": f"1@127.0.0.1:{self.controller_port}",
            "listeners": f"PLAINTEXT://127.0.0.1:{self.port},"
            f"CONTROLLER://127.0.0.1:{self.controller_port}",
            "advertised.listeners": f"PLAINTEXT://127.0.0.1:{self.port}",
            "controller.listener.names": "CONTROLLER",
            "inter.broker.listener.name": "PLAINTEXT",
            "listener.security.protocol.map": "PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT",
            "log.dirs": str(data),
            "num.partitions": "1",
            "auto.create.topics.enable": "false",
            "offsets.topic.replication.factor": "1",
            "offsets.topic.num.partitions": "8",
            "transaction.state.log.replication.factor": "1",
            "transaction.state.log.min.isr": "1",
            "transaction.state.log.num.partitions": "4",
            "share.coordinator.state.topic.replication.factor": "1",
            "share.coordinator.state.topic.min.isr": "1",
            "group.initial.rebalance.delay.ms": "0",
            # KIP-848 groups (group.protocol=consumer) take their session timeout and heartbeat
            # from the broker (defaults 45 s and 5 s): short, so that a killed member's
            # partitions move within seconds, as the classic tests set on the client.
            "group.consumer.min.session.timeout.ms": "6000",
            "group.consumer.session.timeout.ms": "6000",
            "group.consumer.min.heartbeat.interval.ms": "1000",
            "group.consumer.heartbeat.interval.ms": "1000",
            "log.retention.check.interval.ms": "10000",
        }
        (self.workdir / "server.properties").write_text(
            "".join(f"{k}={v}\n" for k, v in props.items())
        )
        (self.workdir / "log4j2.properties").write_text(
            "rootLogger.level = WARN\n"
            "rootLogger.appenderRef.out.ref = out\n"
            "appender.out.type = Console\n"
            "appender.out.name = out\n"
            "appender.out.layout.type = PatternLayout\n"
            "appender.out.layout.pattern = %d{ISO8601} %-5p [%c] %m%n\n"
            "logger.kafka.name = kafka\n"
            "logger.kafka.level = INFO\n"
        )
        formatted = subprocess.run(
            self._java()
            + [
                "kafka.tools.StorageTool",
                "format",
                f"--cluster-id={self.cluster_id}",
                "-c",
                str(self.workdir / "server.properties"),
            ],
            capture_output=True,
            text=True,
        )
        if formatted.returncode != 0:
            raise ComponentError(f"formatting Kafka storage failed:\n{formatted.stderr}")

    def command(self) -> list[str]:
        return self._java() + ["kafka.Kafka", str(self.workdir / "server.properties")]

    def ready(self) -> bool:
        if not port_open(self.port):
            return False
        from confluent_kafka.admin import AdminClient

        admin = AdminClient({"bootstrap.servers": self.bootstrap})
        metadata = admin.list_topics(timeout=2)
        return len(metadata.brokers) == 1

    @property
    def bootstrap(self) -> str:
        return f"127.0.0.1:{self.port}"

    def settings(self) -> dict[str, str]:
        return {"WEIR_TEST_KAFKA_BOOTSTRAP": self.bootstrap}


class Postgres(Component):
    """PostgreSQL 15 from Debian, in a fresh data directory, listening on TCP loopback only.

    PostgreSQL refuses to run as root; as root the server runs as the unprivileged `nobody`.
    """

    name = "postgres"
    user = "weir"
    database = "weir"

    def __init__(self, workdir: Path):
        super().__init__(workdir)
        self.bin = self._find_bin()
        self.as_user: list[str] = []
        if os.geteuid() == 0:
            self.as_user = ["runuser", "-u", "nobody", "--"]

    @staticmethod
    def _find_bin() -> Path:
        candidates = sorted(Path("/usr/lib/postgresql").glob("*/bin/initdb"), reverse=True)
        if not candidates:
            raise ComponentError("PostgreSQL server binaries not found: run scripts/setup")
        return candidates[0].parent

    def prepare(self) -> None:
        data = self.workdir / "data"
        shutil.rmtree(data, ignore_errors=True)
        if self.as_user:
            nobody = pwd.getpwnam("nobody")
            for path in (self.workdir, *self.workdir.parents):
                if path == Path("/"):
                    break
                path.chmod(path.stat().st_mode | 0o011)  # let `nobody` traverse
            data.mkdir()
            os.chown(data, nobody.pw_uid, nobody.pw_gid)
            os.chown(self.log_path.parent, nobody.pw_uid, nobody.pw_gid)
        result = subprocess.run(
            self.as_user
            + [
                str(self.bin / "initdb"),
                "-D",
                str(data),
                "-U",
                self.user,
                "--auth=trust",
                "--encoding=UTF8",
                "--locale=C",
                "--no-sync",
            ],
            capture_output=True,
            text=True,
        )
        if result.returncode != 0:
            raise ComponentError(f"initdb failed:\n{result.stdout}\n{result.stderr}")

    def command(self) -> list[str]:
        return self.as_user + [
            str(self.bin / "postgres"),
            "-D",
            str(self.workdir / "data"),
            "-c",
            f"port={self.port}",
            "-c",
            "listen_addresses=127.0.0.1",
            "-c",
            "unix_socket_directories=",
            "-c",
            "fsync=off",
            "-c",
            "max_connections=200",
        ]

    def ready(self) -> bool:
        if not port_open(self.port):
            return False
        import psycopg

        with psycopg.connect(self.dsn("postgres"), connect_timeout=2):
            return True

    def after_ready(self) -> None:
        import psycopg

        with psycopg.connect(self.dsn("postgres"), autocommit=True) as conn:
            conn.execute(f"CREATE DATABASE {self.database}")

    def stop(self, grace_s: float = 10.0) -> None:
        # SIGTERM is PostgreSQL's "smart" shutdown, which waits for clients; SIGINT is "fast".
        if self.process is not None and self.process.poll() is None:
            try:
                os.killpg(self.process.pid, signal.SIGINT)
                self.process.wait(timeout=grace_s)
            except (subprocess.TimeoutExpired, ProcessLookupError):
                pass
        super().stop(grace_s)

    def dsn(self, database: str | None = None) -> str:
        return (
            f"host=127.0.0.1 port={self.port} user={self.user} "
            f"dbname={database or self.database}"
        )

    def settings(self) -> dict[str, str]:
        return {
            "WEIR_TEST_PG_DSN": self.dsn(),
            "WEIR_TEST_PG_URL": f"postgresql://{self.user}@127.0.0.1:{self.port}/{self.database}",
        }


class MotoS3(Component):
    """The moto S3 emulator (moto[server] from PyPI)."""

    name = "moto"
    access_key = "weir-test-access"
    secret_key = "weir-test-secret"
    region = "us-east-1"

    def command(self) -> list[str]:
        return [str(DEPS / "venv" / "bin" / "moto_server"), "-H", "127.0.0.1", "-p", str(self.port)]

    def ready(self) -> bool:
        with urllib.request.urlopen(f"http://127.0.0.1:{self.port}/moto-api/", timeout=2) as r:
            return r.status == 200

    def settings(self) -> dict[str, str]:
        return {
            "WEIR_TEST_S3_ENDPOINT": f"127.0.0.1:{self.port}",
            "WEIR_TEST_S3_ACCESS_KEY": self.access_key,
            "WEIR_TEST_S3_SECRET_KEY": self.secret_key,
            "WEIR_TEST_S3_REGION": self.region,
        }


class Azurite(Component):
    """The Azurite Azure Blob emulator (npm), blob service only."""

    name = "azurite"

    def command(self) -> list[str]:
        binary = DEPS / "node" / "node_modules" / ".bin" / "azurite-blob"
        if not binary.exists():
            raise ComponentError(f"{binary} is missing: run scripts/setup")
        return [
            str(binary),
            "--blobHost",
            "127.0.0.1",
            "--blobPort",
            str(self.port),
            "--location",
            str(self.workdir / "data"),
            "--skipApiVersionCheck",
            "--loose",
        ]

    def ready(self) -> bool:
        return port_open(self.port)

    def settings(self) -> dict[str, str]:
        return {
            "WEIR_TEST_AZURE_BLOB_AUTHORITY": f"127.0.0.1:{self.port}",
            "WEIR_TEST_AZURE_ACCOUNT": AZURITE_ACCOUNT,
            "WEIR_TEST_AZURE_KEY": AZURITE_KEY,
            "WEIR_TEST_AZURE_CONNECTION_STRING": (
                f"DefaultEndpointsProtocol=http;AccountName={AZURITE_ACCOUNT};"
                f"AccountKey={AZURITE_KEY};"
                f"BlobEndpoint=http://127.0.0.1:{self.port}/{AZURITE_ACCOUNT};"
            ),
        }


from .iceberg_catalogs import IcebergRest, Nessie  # noqa: E402 (they build on Component)

COMPONENTS: dict[str, type[Component]] = {
    "kafka": Kafka,
    "postgres": Postgres,
    "s3": MotoS3,
    "azure": Azurite,
    "iceberg-rest": IcebergRest,
    "nessie": Nessie,
}
