"""The ZooKeeper controller's event handlers and state machines, one file per Kafka class or manager
under Kafka's own names (``KafkaController``, ``ReplicaStateMachine``, ``PartitionStateMachine``,
``TopicDeletionManager``, ...)."""
