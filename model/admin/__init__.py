"""Kafka's admin tools, as ``kmc assign/plan/validate/prove`` use them: replica assignment
(``AdminUtils.assignReplicasToBrokers``), ``kafka-reassign-partitions.sh`` JSON, the placement
properties as z3 constraints, and the reassignment planner. Independent of any controller."""
