module interop/tap

go 1.23.0
