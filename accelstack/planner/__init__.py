"""Pure sizing and cost math (no Pulumi, no I/O): KV cache and concurrency, replicas and queue targets,
cold start, checkpoint intervals, Lustre sizing, prices and the decision advisor.

Every default that comes from a table or paper names its source where it is defined, so `size`,
`cost` and `preview` can say where a number came from.
"""
