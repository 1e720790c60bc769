"""The ZooKeeper-era Kafka controller (Kafka 1.1-2.3): the state it reads and writes (``state/``),
its event handlers and state machines under Kafka's file names (``controller/``), the world around
it: brokers, the admin, failures and partition leaders (``environment/``), and
:mod:`model.zk.kafka_model`, the :class:`explorer.contract.Model` the explorers search."""
