"""The workloads' recipes: the one neutral sequence each workload is built in, over a cloud's typed parts.

A recipe owns the order (network, storage, identity, scheduler, nodes), the handoffs between the steps (typed
values, never a component), the nodes' plain boot and the output contract. A cloud supplies its parts
(`accelstack.components.<cloud>`), which create that cloud's resources and keep its ordering quirks.
"""
