"""The Pulumi program: read stack config -> spec -> build one stack (accelstack.program). Nothing else."""

from accelstack.program import main

main()
