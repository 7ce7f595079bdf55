module github.com/ttlstore/ttlstore

go 1.23

require (
	github.com/benbjohnson/clock v1.3.5
	github.com/google/btree v1.1.3
	github.com/stretchr/testify v1.12.1
	go.uber.org/goleak v1.3.0
	pgregory.net/rapid v1.3.0
)

require go.yaml.in/yaml/v3 v3.0.5 // indirect
