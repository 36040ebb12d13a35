"""`eks-devices preflight` as users run it: exit 0 / 1 / 2, JSON for machines, and one-line errors
(no traceback) when the credentials or the profile cannot be used."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import boto3
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
    assert {"check", "subject", "status", "detail", "fix", "iamAction"} == set(data["results"][0])
    assert {r["check"] for r in data["results"]} >= {c.name for c in preflight.CHECKS}


def test_failures_exit_1_and_print_a_table_with_fixes(session: boto3.Session) -> None:
    aws.reservations(session, [])  # prod's capacity block does not exist in this account
    code, stdout, _ = invoke("prod", "--project-dir", str(ROOT))
    assert code == 1
    assert "capacity.reservations" in stdout and "does not exist" in stdout
    assert "Preflight of stack prod in us-west-2" in stdout and "failed" in stdout.splitlines()[-1]


def test_region_option_overrides_the_stack(session: boto3.Session) -> None:
    code, stdout, _ = invoke("dev", "--region", "eu-west-1", "--json", "--project-dir", str(ROOT))
    data = json.loads(stdout)
    assert data["region"] == "eu-west-1"
    assert "in eu-west-1" in data["results"][0]["detail"]
    assert code in (0, 1)


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


def test_an_aws_error_inside_a_check_is_not_run_and_the_run_goes_on(session: boto3.Session) -> None:
    def broken(_: dict[str, object]) -> dict[str, object]:
        raise aws.FakeError("ServerException", "try later", 400)
    aws.fake(session, "eks", "DescribeCluster", broken)
    exit_code, stdout, _ = invoke("dev", "--json", "--project-dir", str(ROOT))
    data = json.loads(stdout)
    assert exit_code == 0
    cluster = [r for r in data["results"] if r["check"].startswith("cluster.")]
    assert cluster and all(r["status"] == "not-run" and "ServerException: try later" in r["detail"] for r in cluster)
