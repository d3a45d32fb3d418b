"""Datapath engines shared by several PEs: the row sweep, the systolic array, comparator networks, arithmetic blocks."""
