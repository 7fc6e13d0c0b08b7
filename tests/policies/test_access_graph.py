"""The neutral access graph and the one separation judgement over it (policies/access.py,
policies/separation/access_rules.py), on edges as any vendor's reader produces them."""

from __future__ import annotations

import pytest

from accelstack.policies import access
from accelstack.policies.access import (
    ANY,
    BECOME,
    IDENTITY,
    KEY,
    OBJECTS,
    OWN,
    READ,
    SERVICE,
    THROUGH_STORAGE,
    WRITE,
    Edge,
    Party,
)
from accelstack.policies.common import make_context
from accelstack.policies.separation import access_rules

TRAINING, SERVING, OUTSIDER = "111111111111", "222222222222", "333333333333"


def ctx(workload: str, **config: object):
    return make_context(
        {"workload": workload, "trainingAccounts": [TRAINING], "servingAccounts": [SERVING], **config}, []
    )


def edge(source: Party, access_: str, target: Party, scope: str | None = None, unplaced: str = "") -> Edge:
    return Edge(source, access_, target, "urn:x", "a test grant", scope, unplaced)


ARTIFACTS = Party("arn:aws:s3:::train", TRAINING, OBJECTS)
SERVING_ROLE = Party("arn:aws:iam::222222222222:role/replica", SERVING, IDENTITY)
OWN_ROLE = Party("role/own", OWN, IDENTITY)


def judged(edges: list[Edge], workload: str, graph: bool = False, **config: object) -> list[str]:
    built = access.AccessGraph(list(edges)) if graph else None
    return [m for _, m in access_rules.violations(edges, ctx(workload, **config), built)]


def test_serving_reading_artifacts_under_the_prefix_is_the_one_crossing() -> None:
    assert judged([edge(SERVING_ROLE, READ, ARTIFACTS, scope="models/llama/")], "training") == []
    assert judged([edge(OWN_ROLE, READ, ARTIFACTS, scope="models/")], "serving") == []
    assert judged([edge(OWN_ROLE, READ, Party("k", TRAINING, KEY), scope=THROUGH_STORAGE)], "serving") == []


@pytest.mark.parametrize(
    ("scope", "level"),
    [("", READ), (None, READ), ("mod", READ), ("checkpoints/", READ), ("models/", WRITE)],
    ids=["whole-container", "unscoped", "shorter-prefix", "other-prefix", "write"],
)
def test_anything_wider_than_the_read_path_crosses(scope: str | None, level: str) -> None:
    found = judged([edge(OWN_ROLE, level, ARTIFACTS, scope=scope)], "serving")
    assert len(found) == 1 and "only serving reading training's artifacts" in found[0]


def test_training_reading_servings_objects_is_not_the_read_path() -> None:
    serving_objects = Party("gs://serve", SERVING, OBJECTS)
    assert judged([edge(OWN_ROLE, READ, serving_objects, scope="models/")], "training")


def test_a_key_used_directly_crosses() -> None:
    assert judged([edge(OWN_ROLE, READ, Party("k", TRAINING, KEY))], "serving")


def test_become_across_sides_always_crosses() -> None:
    training_role = Party("arn:aws:iam::111111111111:role/head", TRAINING, IDENTITY)
    found = judged([edge(OWN_ROLE, BECOME, training_role)], "serving")
    assert found and "can become" in found[0]


def test_become_is_followed_transitively() -> None:
    # own role -> become another own role -> which writes training's bucket: the first is judged too.
    middle = Party("role/middle", OWN, IDENTITY)
    edges = [edge(OWN_ROLE, BECOME, middle), edge(middle, WRITE, ARTIFACTS, scope="")]
    found = judged(edges, "serving", graph=True)
    assert any("by becoming role/middle" in m for m in found)
    assert any(m.startswith("a test grant: role/middle") for m in found)


@pytest.mark.parametrize(
    "party",
    [access.unplaced("principal://iam.googleapis.com/x", "a workload identity pool"), Party("x", None)],
    ids=["unplaced-with-reason", "unplaced"],
)
def test_an_end_the_reader_cannot_place_fails_closed(party: Party) -> None:
    for found in (judged([edge(party, READ, OWN_ROLE)], "training"), judged([edge(OWN_ROLE, READ, party)], "training")):
        assert found and "cannot place" in found[0] and "fail closed" in found[0]


def test_an_action_the_reader_cannot_judge_fails_closed() -> None:
    found = judged([edge(OWN_ROLE, READ, Party("r", OWN), unplaced="condition ForAllValues:StringLike")], "training")
    assert found and "cannot judge condition ForAllValues" in found[0]


def test_every_account_and_outsiders_cross_but_trusted_and_the_cloud_do_not() -> None:
    own_bucket = Party("b", OWN, OBJECTS)
    assert judged([edge(Party("*", ANY), READ, own_bucket, scope="models/")], "training")
    assert judged([edge(Party(OUTSIDER, OUTSIDER), READ, own_bucket, scope="models/")], "training")
    assert judged([edge(Party(OUTSIDER, OUTSIDER), WRITE, own_bucket)], "training", trustedAccounts=[OUTSIDER]) == []
    assert judged([edge(Party("logs.amazonaws.com", SERVICE), WRITE, own_bucket)], "training") == []


def test_a_trusted_account_that_is_the_other_side_is_not_trusted() -> None:
    assert judged([edge(Party(SERVING, SERVING), WRITE, Party("b", OWN))], "training", trustedAccounts=[SERVING])


def test_an_azure_subscription_in_another_case_is_the_same_side() -> None:
    sub = "AAAAAAAA-0000-0000-0000-000000000000"
    context = make_context(
        {
            "workload": "serving",
            "trainingAccounts": [sub.lower()],
            "servingAccounts": ["b" * 8 + "-0000-0000-0000-0000"],
        },
        [],
    )
    crossing = edge(OWN_ROLE, WRITE, Party("/subscriptions/x", sub))
    assert (
        access_rules.violations([crossing], context)
        and "the training account" in access_rules.violations([crossing], context)[0][1]
    )


def test_without_a_side_nothing_is_judged() -> None:
    context = make_context({"trainingAccounts": [TRAINING], "servingAccounts": [SERVING]}, [])
    assert access_rules.violations([edge(Party("*", ANY), ADMIN_LEVEL, OWN_ROLE)], context) == []


ADMIN_LEVEL = access.ADMIN


def test_an_unknown_access_level_is_refused() -> None:
    with pytest.raises(ValueError, match="allowed: read, write, admin, become"):
        edge(OWN_ROLE, "list", ARTIFACTS)


def test_the_stack_graph_is_built_once_per_stack() -> None:
    calls: list[object] = []

    def reader(resource: object, placement: access.Placement):
        calls.append(resource)
        return []

    resources = [type("R", (), {"props": {}, "urn": f"u{i}"})() for i in range(3)]
    for _ in range(4):
        access.graph_of(resources, [reader], frozenset(), {})
    assert len(calls) == 3


def test_a_bucket_named_only_by_name_is_placed_by_the_stack_and_the_config() -> None:
    bucket = type("R", (), {"props": {"bucket": "mine"}, "urn": "u", "resource_type": "aws:s3/bucket:Bucket"})()
    # A grant names a bucket too: the bucket it names is not the stack's for that.
    grant = type(
        "R", (), {"props": {"bucket": "theirs-too"}, "urn": "g", "resource_type": "aws:s3/bucketPolicy:BucketPolicy"}
    )()
    resources = [bucket, grant]
    where = access.Placement(frozenset({TRAINING}), {"theirs": SERVING}, access.Stack.of(resources))
    assert where.store_party("mine", "arn:aws:s3:::mine").account == OWN
    assert where.store_party("theirs", "arn:aws:s3:::theirs").account == SERVING
    assert where.store_party("theirs-too", "arn:aws:s3:::theirs-too").account is None
    stranger = where.store_party("stranger", "arn:aws:s3:::stranger")
    assert stranger.account is None and "trainingStores" in stranger.unplaced and not stranger.needs_stack
    alone = access.Placement(frozenset({TRAINING}), {}).store_party("mine", "arn:aws:s3:::mine")
    assert alone.account is None and alone.needs_stack
