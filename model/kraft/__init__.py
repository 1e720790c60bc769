"""The KRaft controller of Kafka 3.9 (``metadata/src/main/java/org/apache/kafka/controller/`` at 3.9.0-rc3) and
the brokers that replay its metadata log, behind :class:`explorer.contract.Model` (:mod:`model.kraft.kraft_model`).
Independent of the ZooKeeper controller in :mod:`model.zk`."""
