"""accelstack: training and serving GPU infrastructure on Pulumi from one typed spec."""

__version__ = "0.1.0"
