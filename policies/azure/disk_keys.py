"""Where Azure managed disks name the disk encryption set that holds their key: the azure-native compute Disk's
`encryption.diskEncryptionSetId`, and ManagedDiskParameters.diskEncryptionSet of a VM's or a scale set's OS and data
disks (https://learn.microsoft.com/azure/virtual-machines/disk-encryption). Whoever holds that key reads the disks."""

from __future__ import annotations

from typing import Any

from ..readers import get, items_at

_MANAGED_DISKS = (("osDisk",), ("dataDisks[]",))
DISK_KEY_PATHS: dict[str, tuple[tuple[str, ...], ...]] = {
    "azure-native:compute:Disk": (("encryption", "diskEncryptionSetId"),),
    "azure-native:compute:VirtualMachine": tuple(
        ("storageProfile", *d, "managedDisk", "diskEncryptionSet", "id") for d in _MANAGED_DISKS
    ),
    "azure-native:compute:VirtualMachineScaleSet": tuple(
        ("virtualMachineProfile", "storageProfile", *d, "managedDisk", "diskEncryptionSet", "id")
        for d in _MANAGED_DISKS
    ),
}


def _values_at(node: Any, path: tuple[str, ...]) -> list[Any]:
    """Every value at `path`; a step ending in [] walks each item of a list."""
    if not path:
        return [node]
    step, rest = path[0], path[1:]
    if step.endswith("[]"):
        return [v for item in items_at(node, step[:-2]) for v in _values_at(item, rest)]
    child = get(node, step)
    return [] if child is None else _values_at(child, rest)


def disk_encryption_sets(resource: Any) -> list[str]:
    """The ARM ids of the disk encryption sets the resource's disks use."""
    found = [v for path in DISK_KEY_PATHS.get(resource.resource_type, ()) for v in _values_at(resource.props, path)]
    return [v for v in found if isinstance(v, str) and v]
