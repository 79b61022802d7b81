"""The shoe journal and the deck reports: a record the controller writes and the services read."""
