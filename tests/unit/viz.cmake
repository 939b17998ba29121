# viz.cmake - (being written)
