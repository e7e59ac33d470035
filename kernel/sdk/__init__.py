"""What a node author imports: the Node class, its decorators, episodes, the clock, errors and the test harness."""
