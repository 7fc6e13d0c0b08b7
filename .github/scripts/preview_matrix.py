"""The PR workflow's preview matrix, from the stack files: one entry per stacks/Pulumi.<stack>.yaml with the
stack name, its region (accelstack:account.region) and the repository secret holding the preview role of its
workload's account. Needs only PyYAML.

    python .github/scripts/preview_matrix.py [PROJECT_DIR]   ->  {"include": [{"stack", "region", "role_secret"}]}

Writes `matrix=<json>` to $GITHUB_OUTPUT when set (GitHub Actions), and the JSON to stdout.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import yaml

# A landing stack previews from the organization's management account (or management group / organization on Azure
# and GCP): its own preview identity, read-only there.
ROLE_SECRETS = {
    "training": "AWS_TRAINING_PREVIEW_ROLE",
    "serving": "AWS_SERVING_PREVIEW_ROLE",
    "landing": "AWS_LANDING_PREVIEW_ROLE",
}


def matrix(project_dir: Path) -> dict:
    include = []
    for path in sorted((project_dir / "stacks").glob("Pulumi.*.yaml")):
        stack = path.name[len("Pulumi.") : -len(".yaml")]
        config = (yaml.safe_load(path.read_text()) or {}).get("config") or {}
        workload = config.get("accelstack:workload")
        account = config.get("accelstack:account") or {}
        region = account.get("region") or account.get("location")  # Azure's account block says `location`
        if workload not in ROLE_SECRETS or not region:
            raise SystemExit(
                f"{path}: needs accelstack:workload (training, serving or landing) and accelstack:account.region (Azure: location)"
            )
        cloud = str(config.get("accelstack:cloud") or "aws").upper()
        # The secret holding the preview identity of the workload's account on the stack's cloud.
        secret = ROLE_SECRETS[workload].replace("AWS_", f"{cloud}_", 1)
        entry = {"stack": stack, "cloud": cloud.lower(), "region": region, "role_secret": secret}
        # Azure's login also needs the subscription and tenant (ids, not secrets: they are in the stack file).
        if cloud == "AZURE":
            entry.update(account=account.get("subscriptionId", ""), tenant=account.get("tenantId", ""))
        include.append(entry)
    if not include:
        raise SystemExit(f"no stacks/Pulumi.*.yaml in {project_dir}")
    return {"include": include}


def main() -> None:
    document = json.dumps(matrix(Path(sys.argv[1] if len(sys.argv) > 1 else ".")))
    output = os.environ.get("GITHUB_OUTPUT")
    if output:
        with open(output, "a", encoding="utf-8") as stream:
            stream.write(f"matrix={document}\n")
    print(document)


if __name__ == "__main__":
    main()
