module github.com/ttlstore/ttlstore/cosmoshttp/conformance

go 1.23.0

require (
	github.com/Azure/azure-sdk-for-go/sdk/azcore v1.17.1
	github.com/Azure/azure-sdk-for-go/sdk/data/azcosmos v1.4.1
	github.com/benbjohnson/clock v1.3.5
	github.com/ttlstore/ttlstore v0.0.0
	go.uber.org/goleak v1.3.0
)

require (
	github.com/Azure/azure-sdk-for-go v68.0.0+incompatible // indirect
	github.com/Azure/azure-sdk-for-go/sdk/internal v1.11.1 // indirect
	github.com/google/btree v1.1.3 // indirect
	golang.org/x/net v0.38.0 // indirect
	golang.org/x/text v0.23.0 // indirect
)

replace github.com/ttlstore/ttlstore => ../..
