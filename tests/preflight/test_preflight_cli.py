"""`eks-devices preflight` as users run it: exit 0 / 1 / 2, JSON for machines, and one-line errors
(no traceback) when the credentials or the profile cannot be used."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import boto3
import botocore.exceptions
import pytest
from typer.testing import CliRunner

from eks_devices import preflight
from eks_devices.cli.app import app
from support import aws, cli
from support.stacks import ROOT

NO_AWS = ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_PROFILE", "AWS_DEFAULT_PROFILE",
          "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI", "AWS_CONTAINER_CREDENTIALS_FULL_URI",
          "AWS_WEB_IDENTITY_TOKEN_FILE", "AWS_ROLE_ARN")


@pytest.fixture
def session(account: None, monkeypatch: pytest.MonkeyPatch) -> boto3.Session:
    """The session the CLI will use: moto, plus the fakes a test registers on it."""
    made = aws.new_session()
    monkeypatch.setattr(preflight, "open_session", lambda profile, region: made)
    return made


def invoke(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(app, ["preflight", *args], catch_exceptions=False)
    return result.exit_code, result.stdout, result.stderr


def test_clean_stack_exits_0_with_json(session: boto3.Session) -> None:
    code, stdout, _ = invoke("dev", "--json", "--project-dir", str(ROOT))
    data = json.loads(stdout)
    assert code == 0
    assert (data["stack"], data["region"]) == ("dev", "us-west-2")
    assert data["summary"]["fail"] == 0 and data["summary"]["pass"] > 0
    assert {"check", "subject", "status", "detail", "fix", "iamAction", "blocked"} == set(data["results"][0])
    assert {r["check"] for r in data["results"]} >= {c.name for c in preflight.CHECKS}


def test_failures_exit_1_and_print_each_verdict_with_its_fix(session: boto3.Session) -> None:
    aws.reservations(session, [])  # prod's capacity block does not exist in this account
    code, stdout, _ = invoke("prod", "--project-dir", str(ROOT))
    assert code == 1
    assert "capacity.reservations" in stdout and "does not exist" in stdout
    assert "Preflight of stack prod in us-west-2" in stdout and "failed" in stdout.splitlines()[-1]


def test_a_region_other_than_the_stack_s_is_refused(session: boto3.Session) -> None:
    code, stdout, _ = invoke("dev", "--region", "eu-west-1", "--json", "--project-dir", str(ROOT))
    assert code == 2 and "differs from the stack's aws:region us-west-2" in json.loads(stdout)["error"]
    same, stdout, _ = invoke("dev", "--region", "us-west-2", "--json", "--project-dir", str(ROOT))
    assert same == 0 and json.loads(stdout)["region"] == "us-west-2"


def test_bad_stack_exits_2(tmp_path: Path) -> None:
    (tmp_path / "Pulumi.yaml").write_text("name: x\nruntime: python\nstackConfigDir: stacks\n")
    (tmp_path / "stacks").mkdir()
    (tmp_path / "stacks" / "Pulumi.bad.yaml").write_text("config:\n  eks-devices:cluster: {name: x}\n")
    code, _, stderr = invoke("bad", "--project-dir", str(tmp_path))
    assert code == 2 and "cluster.version" in stderr


def run_cli(*args: str, **env: str) -> subprocess.CompletedProcess[str]:
    """The real command in a clean environment: no credentials, no config, no instance metadata, and
    an endpoint that refuses connections, so nothing can reach AWS even by accident."""
    clean = {k: v for k, v in os.environ.items() if k not in NO_AWS}
    clean.update({"AWS_CONFIG_FILE": os.devnull, "AWS_SHARED_CREDENTIALS_FILE": os.devnull,
                  "AWS_EC2_METADATA_DISABLED": "true", "AWS_ENDPOINT_URL": "http://127.0.0.1:9", **env})
    return cli.run("preflight", *args, env=clean, command=("-c", "from eks_devices.cli import main; main()"),
                   timeout=120)


def test_missing_credentials_is_one_line_without_traceback() -> None:
    result = run_cli("dev")
    assert result.returncode == 2
    assert result.stderr.strip().startswith("preflight: no AWS credentials found")
    assert len(result.stderr.strip().splitlines()) == 1 and "Traceback" not in result.stderr + result.stdout


def test_missing_credentials_as_json() -> None:
    result = run_cli("dev", "--json")
    assert result.returncode == 2
    assert json.loads(result.stdout)["error"].startswith("preflight: no AWS credentials found")


def test_unknown_profile_is_one_line_without_traceback() -> None:
    result = run_cli("dev", "--profile", "no-such-profile")
    assert result.returncode == 2
    assert result.stderr.strip() == ("preflight: AWS profile 'no-such-profile' is not configured "
                                     "(see `aws configure list-profiles`)")


def test_unknown_profile_from_the_environment_is_one_line_too() -> None:
    result = run_cli("dev", AWS_PROFILE="no-such-profile")
    assert result.returncode == 2
    assert result.stderr.strip() == ("preflight: AWS profile 'no-such-profile' is not configured "
                                     "(see `aws configure list-profiles`)")


def test_the_stack_s_aws_profile_is_the_default_profile(tmp_path: Path) -> None:
    text = (ROOT / "stacks" / "Pulumi.dev.yaml").read_text().replace("config:\n", "config:\n  aws:profile: stack-profile\n", 1)
    (tmp_path / "Pulumi.yaml").write_text("name: x\nruntime: python\nstackConfigDir: stacks\n")
    (tmp_path / "stacks").mkdir()
    (tmp_path / "stacks" / "Pulumi.p.yaml").write_text(text)
    result = run_cli("p", "--project-dir", str(tmp_path))
    assert result.returncode == 2 and "AWS profile 'stack-profile' is not configured" in result.stderr
    given = run_cli("p", "--project-dir", str(tmp_path), "--profile", "flag-profile")
    assert "AWS profile 'flag-profile' is not configured" in given.stderr


def test_unreachable_endpoint_is_one_line_too() -> None:
    result = run_cli("dev", AWS_ACCESS_KEY_ID="testing", AWS_SECRET_ACCESS_KEY="testing", AWS_MAX_ATTEMPTS="1",
                     AWS_RETRY_MODE="standard")
    assert result.returncode == 2
    assert result.stderr.startswith("preflight: cannot reach AWS in us-west-2")
    assert len(result.stderr.strip().splitlines()) == 1 and "Traceback" not in result.stderr


@pytest.mark.parametrize(("code", "expected"), [
    ("AccessDenied", "preflight: sts:GetCallerIdentity was refused (AccessDenied) in us-west-2"),
    ("InternalFailure", "preflight: sts:GetCallerIdentity failed in us-west-2: InternalFailure: boom"),
])
def test_any_error_from_the_identity_call_is_one_line_exit_2(session: boto3.Session, code: str,
                                                             expected: str) -> None:
    """The first call decides whether anything can run: no AWS error there may end in a traceback."""
    def refuse(_: dict[str, object]) -> dict[str, object]:
        raise aws.FakeError(code, "boom", 403 if code == "AccessDenied" else 400)
    aws.fake(session, "sts", "GetCallerIdentity", refuse)
    for args, stream in ((("dev",), 2), (("dev", "--json"), 1)):
        exit_code, stdout, stderr = invoke(*args, "--project-dir", str(ROOT))
        assert exit_code == 2
        if stream == 2:
            assert stderr.strip().startswith(expected) and len(stderr.strip().splitlines()) == 1
        else:
            assert json.loads(stdout)["error"].startswith(expected)


def test_an_aws_error_inside_a_check_is_not_run_exit_3_and_the_run_goes_on(session: boto3.Session) -> None:
    def broken(_: dict[str, object]) -> dict[str, object]:
        raise aws.FakeError("ServerException", "try later", 400)
    aws.fake(session, "eks", "DescribeCluster", broken)
    exit_code, stdout, _ = invoke("dev", "--json", "--project-dir", str(ROOT))
    data = json.loads(stdout)
    assert exit_code == 3
    cluster = [r for r in data["results"] if r["check"].startswith("cluster.")]
    assert cluster and all(r["status"] == "not-run" and r["blocked"] and "ServerException: try later" in r["detail"]
                           for r in cluster)
    assert [r for r in data["results"] if r["status"] == "pass" and not r["check"].startswith("aws.")]
    allowed, _, _ = invoke("dev", "--json", "--allow-not-run", "--project-dir", str(ROOT))
    assert allowed == 0


def test_every_check_denied_is_exit_3_not_a_clean_pass(session: boto3.Session) -> None:
    for service, operation in {(c.service, c.operation) for c in preflight.API_CALLS} - {("sts", "GetCallerIdentity")}:
        aws.deny(session, service, operation)
    exit_code, stdout, _ = invoke("dev", "--json", "--project-dir", str(ROOT))
    data = json.loads(stdout)
    assert exit_code == 3 and data["summary"]["fail"] == 0
    assert [r for r in data["results"] if r["blocked"] and r["iamAction"]]


@pytest.mark.parametrize("failure", ["timeout", "expired"])
def test_a_transient_failure_mid_run_keeps_what_was_gathered(session: boto3.Session, failure: str) -> None:
    """A read timeout, or credentials that expire after the identity call, cost only the checks
    whose calls fail; the results gathered before and after stay."""
    def fail(_: dict[str, object]) -> dict[str, object]:
        if failure == "timeout":
            raise botocore.exceptions.ReadTimeoutError(endpoint_url="https://ec2.us-west-2.amazonaws.com")
        raise aws.FakeError("ExpiredToken", "The security token included in the request is expired", 400)
    aws.fake(session, "ec2", "DescribeInstanceTypes", fail)
    exit_code, stdout, _ = invoke("dev", "--json", "--project-dir", str(ROOT))
    data = json.loads(stdout)
    assert exit_code == 3
    blocked = [r for r in data["results"] if r["blocked"]]
    assert blocked and all("ec2:DescribeInstanceTypes" in r["detail"] for r in blocked)
    assert {r["check"] for r in data["results"] if r["status"] == "pass"} >= {"aws.identity"}
    assert any(r["check"].startswith("cluster.") for r in data["results"])  # later checks still ran


def test_an_opt_in_region_not_enabled_says_so(tmp_path: Path, session: boto3.Session) -> None:
    text = (ROOT / "stacks" / "Pulumi.dev.yaml").read_text().replace("aws:region: us-west-2", "aws:region: af-south-1")
    (tmp_path / "Pulumi.yaml").write_text("name: x\nruntime: python\nstackConfigDir: stacks\n")
    (tmp_path / "stacks").mkdir()
    (tmp_path / "stacks" / "Pulumi.d.yaml").write_text(text)

    def refuse(_: dict[str, object]) -> dict[str, object]:
        raise aws.FakeError("InvalidClientTokenId", "The security token included in the request is invalid.", 403)
    aws.fake(session, "sts", "GetCallerIdentity", refuse)
    exit_code, _, stderr = invoke("d", "--project-dir", str(tmp_path))
    assert exit_code == 2 and "af-south-1" in stderr and "opt-in region" in stderr and "refresh" not in stderr


def test_clients_retry_in_adaptive_mode(monkeypatch: pytest.MonkeyPatch) -> None:
    from eks_devices.preflight.aws import RETRY_ATTEMPTS, client_config

    monkeypatch.delenv("AWS_MAX_ATTEMPTS", raising=False)
    monkeypatch.delenv("AWS_RETRY_MODE", raising=False)
    assert client_config().retries == {"mode": "adaptive", "max_attempts": RETRY_ATTEMPTS}
    monkeypatch.setenv("AWS_MAX_ATTEMPTS", "2")
    assert client_config().retries["max_attempts"] == 2


def test_an_existing_cluster_exits_3_naming_the_check_that_could_not_run(session: boto3.Session) -> None:
    """`cluster.daemonsets` cannot run from AWS APIs once the cluster exists: never exit 0 then."""
    aws.create_cluster(session, "ml-dev")
    try:
        code, stdout, _ = invoke("dev", "--json", "--project-dir", str(ROOT))
        assert code == 3
        [daemonsets] = [r for r in json.loads(stdout)["results"] if r["check"] == "cluster.daemonsets"]
        assert daemonsets["status"] == "not-run" and daemonsets["blocked"]
        code, stdout, _ = invoke("dev", "--project-dir", str(ROOT))
        assert code == 3 and "Some checks could not run (" in stdout and "cluster.daemonsets" in stdout.split(
            "Some checks could not run (", 1)[1].split(")", 1)[0]
        allowed, _, _ = invoke("dev", "--allow-not-run", "--project-dir", str(ROOT))
        assert allowed == 0
    finally:  # the module shares one mocked account: leave no cluster for the other tests
        session.client("eks").delete_cluster(name="ml-dev")


@pytest.mark.parametrize("columns", [80, 200])
def test_text_fits_the_terminal_and_never_breaks_a_word(session: boto3.Session, monkeypatch: pytest.MonkeyPatch,
                                                        columns: int) -> None:
    """Preflight's verdicts wrap to the terminal's width (COLUMNS, 80 on a pipe) at spaces only: no line is
    longer unless it is one word, and every word of every detail and fix is printed whole."""
    from eks_devices.cli import app as cli_app

    aws.reservations(session, [])
    monkeypatch.setattr(cli_app.out(), "_width", columns)
    code, stdout, _ = invoke("prod", "--project-dir", str(ROOT))
    data = json.loads(invoke("prod", "--json", "--project-dir", str(ROOT))[1])
    assert code == 1 and data["summary"]["fail"] >= 1
    lines = stdout.splitlines()
    assert all(len(line) <= columns or len(line.split()) == 1 for line in lines)
    assert max(map(len, lines)) > columns - 30  # the width is used, not a narrower fixed one
    words = set(stdout.split())
    for r in data["results"]:
        shown = (r["detail"] + " " + r["fix"]).split()
        assert all(w in words for w in shown if "/" not in w and "(" not in w and ")" not in w), r
