"""Studies: many encoders × seeds × tasks as cells, on a local pool or Ray, then one comparison."""
