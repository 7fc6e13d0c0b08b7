"""Vultr's mocks give an instance its addresses from its name, whatever order Pulumi registers instances in: the golden
exports pin them, and replicas are registered concurrently."""

from types import SimpleNamespace

from accelstack.components.vultr.mocks import VultrMocks

INSTANCE = "vultr:index/instance:Instance"


def addresses(order: list[str]) -> dict[str, tuple[str, str]]:
    mocks = VultrMocks()
    answers = {}
    for name in order:
        _, outputs = mocks.new_resource(SimpleNamespace(typ=INSTANCE, name=name, inputs={}))
        answers[name] = (outputs["mainIp"], outputs["internalIp"])
    return answers


def test_registration_order_does_not_move_an_address():
    names = ["svc-replica-0", "svc-replica-1", "svc-replica-2", "svc-bastion"]
    assert addresses(names) == addresses(list(reversed(names)))


def test_instances_of_one_stack_get_distinct_addresses():
    names = [f"svc-replica-{i}" for i in range(8)] + ["svc-bastion"]
    found = addresses(names)
    assert len({main for main, _ in found.values()}) == len(names)
    assert len({internal for _, internal in found.values()}) == len(names)
