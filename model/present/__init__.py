"""Presentation of model states for the reports: per-state views and sentences describing a state
and a step. The contract implementation (:mod:`model.zk.kafka_model`) hands them to the explorers;
the controller's state, state machines and environment never import this package."""
