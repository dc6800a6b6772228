package demo

// The lists below are common Portuguese first names and surnames, real city names with their
// postal-code prefixes, and generic goods. Names are combined at random, so no row describes
// a real person.

var firstNamesF = []string{
	"Maria", "Ana", "Beatriz", "Inês", "Mariana", "Leonor", "Matilde", "Carolina", "Sofia",
	"Joana", "Catarina", "Rita", "Sara", "Marta", "Filipa", "Teresa", "Helena", "Isabel",
	"Patrícia", "Cláudia", "Sandra", "Raquel", "Diana", "Margarida", "Francisca", "Lara",
	"Alice", "Madalena", "Luísa", "Daniela", "Vera", "Susana", "Fernanda", "Rosa", "Graça",
}

var firstNamesM = []string{
	"João", "José", "António", "Francisco", "Manuel", "Pedro", "Tiago", "Rodrigo", "Duarte",
	"Martim", "Santiago", "Afonso", "Gonçalo", "Diogo", "Miguel", "Rui", "Nuno", "Paulo",
	"Ricardo", "Luís", "Carlos", "Jorge", "Bruno", "André", "Vasco", "Hugo", "Filipe",
	"Fernando", "Sérgio", "Vítor", "Daniel", "Gabriel", "Tomás", "Henrique", "Bernardo",
}

var surnames = []string{
	"Silva", "Santos", "Ferreira", "Pereira", "Oliveira", "Costa", "Rodrigues", "Martins",
	"Jesus", "Sousa", "Fernandes", "Gonçalves", "Gomes", "Lopes", "Marques", "Alves",
	"Almeida", "Ribeiro", "Pinto", "Carvalho", "Teixeira", "Moreira", "Correia", "Mendes",
	"Nunes", "Soares", "Vieira", "Monteiro", "Cardoso", "Rocha", "Raposo", "Neves", "Coelho",
	"Cruz", "Cunha", "Pires", "Ramos", "Reis", "Simões", "Antunes", "Matos", "Fonseca",
	"Machado", "Araújo", "Barbosa", "Tavares", "Lourenço", "Castro", "Figueiredo", "Azevedo",
}

// city is a real Portuguese municipality with the first four digits of its postal codes.
type city struct {
	name   string
	prefix int // first four digits of its postal codes
	span   int // how many consecutive prefixes the city uses
	region string
}

var cities = []city{
	{"Lisboa", 1000, 990, "Lisboa e Vale do Tejo"},
	{"Porto", 4000, 370, "Norte"},
	{"Vila Nova de Gaia", 4400, 35, "Norte"},
	{"Matosinhos", 4450, 15, "Norte"},
	{"Braga", 4700, 50, "Norte"},
	{"Guimarães", 4800, 35, "Norte"},
	{"Viana do Castelo", 4900, 25, "Norte"},
	{"Vila Real", 5000, 10, "Norte"},
	{"Bragança", 5300, 10, "Norte"},
	{"Aveiro", 3800, 10, "Centro"},
	{"Coimbra", 3000, 60, "Centro"},
	{"Viseu", 3500, 20, "Centro"},
	{"Leiria", 2400, 25, "Centro"},
	{"Guarda", 6300, 20, "Centro"},
	{"Castelo Branco", 6000, 10, "Centro"},
	{"Santarém", 2000, 10, "Lisboa e Vale do Tejo"},
	{"Amadora", 2700, 10, "Lisboa e Vale do Tejo"},
	{"Sintra", 2710, 25, "Lisboa e Vale do Tejo"},
	{"Cascais", 2750, 20, "Lisboa e Vale do Tejo"},
	{"Oeiras", 2780, 10, "Lisboa e Vale do Tejo"},
	{"Almada", 2800, 25, "Lisboa e Vale do Tejo"},
	{"Seixal", 2840, 15, "Lisboa e Vale do Tejo"},
	{"Setúbal", 2900, 25, "Lisboa e Vale do Tejo"},
	{"Loures", 2670, 5, "Lisboa e Vale do Tejo"},
	{"Évora", 7000, 5, "Alentejo"},
	{"Beja", 7800, 5, "Alentejo"},
	{"Portalegre", 7300, 5, "Alentejo"},
	{"Faro", 8000, 5, "Algarve"},
	{"Portimão", 8500, 5, "Algarve"},
	{"Funchal", 9000, 60, "Madeira"},
	{"Ponta Delgada", 9500, 60, "Açores"},
}

var streetKinds = []string{"Rua", "Avenida", "Travessa", "Largo", "Praça", "Estrada", "Alameda"}

var streetNames = []string{
	"da Liberdade", "de Santo António", "do Comércio", "da República", "5 de Outubro",
	"25 de Abril", "dos Bombeiros Voluntários", "da Igreja", "do Mercado", "das Flores",
	"Dom Afonso Henriques", "do Infante", "da Estação", "Nova", "do Carmo", "da Boavista",
	"de São João", "das Escolas", "do Sol", "dos Pescadores", "da Fonte", "do Castelo",
}

var emailDomains = []string{
	"gmail.com", "gmail.com", "gmail.com", "hotmail.com", "outlook.pt", "sapo.pt", "sapo.pt",
	"iol.pt", "netcabo.pt", "yahoo.com", "live.com.pt", "mail.telepac.pt",
}

var companyWords = []string{
	"Atlântico", "Lusitana", "Ibérica", "Douro", "Tejo", "Mondego", "Minho", "Algarve",
	"Estrela", "Norte", "Central", "Nova Era", "Horizonte", "Oceano", "Planície", "Serra",
}

var companySectors = []string{
	"Distribuição", "Comércio", "Transportes", "Construções", "Materiais", "Papelaria",
	"Informática", "Alimentar", "Têxteis", "Ferragens", "Serviços", "Logística",
}

// bankCodes are the four-digit codes of banks operating in Portugal, as they appear in NIBs.
var bankCodes = []string{"0007", "0010", "0018", "0023", "0033", "0035", "0036", "0045", "0079", "0269"}
