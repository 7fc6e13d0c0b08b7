"""What runs on a Google Cloud serving replica beside the neutral queue worker: its Pub/Sub client."""
