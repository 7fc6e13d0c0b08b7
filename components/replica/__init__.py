"""What runs on a serving replica, whatever the cloud: the admission-queue worker (shipped in user data)."""
