"""The simulated answers: one generation per held-out question, per personality and method."""
