"""Key Vault names derived from the stack name are valid for every stack name the spec accepts (azure review F7):
3-24 letters, digits and hyphens, a letter first, a letter or digit last, no consecutive hyphens; and a name that
was valid before is unchanged (the vault is protected: a new name would replace it)."""

from __future__ import annotations

import re
from types import SimpleNamespace

import pytest

from accelstack.components.azure import storage

KEY_VAULT_NAME = re.compile(r"^[A-Za-z](?!.*--)[A-Za-z0-9-]{1,22}[A-Za-z0-9]$")
SUBSCRIPTION = "3f2c8a1e-5b7d-4e9f-a0c1-2d3e4f5a6b7c"


def name_for(stack: str, monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.setattr(storage, "account_of", lambda spec: SimpleNamespace(subscription_id=SUBSCRIPTION))
    return storage.vault_name(SimpleNamespace(stack=stack))  # type: ignore[arg-type]


@pytest.mark.parametrize(
    "stack", ["azure-training", "9lab--train", "a", "x" * 40, "lab-2---x", "0", "team-a-", "ab-------------cd"]
)
def test_every_stack_name_gives_a_valid_vault_name(stack: str, monkeypatch: pytest.MonkeyPatch) -> None:
    assert KEY_VAULT_NAME.match(name_for(stack, monkeypatch)), name_for(stack, monkeypatch)


def test_a_name_that_was_valid_is_kept(monkeypatch: pytest.MonkeyPatch) -> None:
    assert name_for("azure-training", monkeypatch) == "azure-training-06badb-kv"
