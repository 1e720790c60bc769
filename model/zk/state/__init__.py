"""The ZooKeeper controller's state as frozen values: the values themselves, the replica and
partition state tables, and :class:`~model.zk.state.step.Step`, the working copy a transition
edits and freezes into the next state."""
