"""Serving simulator: replay a day of requests against exactly what a serving stack would deploy
(`accelstack simulate serving`). Pure Python, no cloud: SimPy for the control plane, numpy for the
request stream."""
