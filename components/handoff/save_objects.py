"""The part of every per-replica fetch program that writes what it listed (components/handoff/oci_par.py,
gcs_token.py, s3_session.py): each object under the prefix into the destination under its name less the prefix,
streamed through a `.part` file and renamed when whole, refusing a name that would leave the destination. Each
program defines `names` (what it listed), `prefix`, `dest` and `object_stream(name)` (the object's open response)
before it; the programs run on the replica's python3 (standard library only)."""

SAVE_OBJECTS = r"""
root = os.path.realpath(dest)
os.makedirs(root, exist_ok=True)
for name in names:
    if not name.startswith(prefix) or name.endswith("/"):
        continue
    target = os.path.realpath(os.path.join(root, name[len(prefix):]))
    if not target.startswith(root + os.sep):
        sys.exit(f"accelstack: object {name!r} would land outside {root}")
    os.makedirs(os.path.dirname(target), exist_ok=True)
    part = target + ".part"
    with object_stream(name) as answer, open(part, "wb") as out:
        shutil.copyfileobj(answer, out, 1 << 24)  # streamed: a shard is gigabytes
    os.replace(part, target)
"""
