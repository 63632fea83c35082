"""horas: a time-and-invoice tracker for freelancers."""
